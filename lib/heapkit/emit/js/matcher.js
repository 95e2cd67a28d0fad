// SPDX-License-Identifier: MIT
// The patterns of the pages a person opens, the SVG flame graph's search and the HTML
// report's search and refinements (focus, ignore, hide, drop): JavaScript's RegExp. The
// CLI's --focus, --ignore and --hide are RE2's (util/regex, model/filter_stacks.cpp), and
// stay the truth; the two read alike the syntax they share, and
// tests/vectors/filters_and_amounts.json holds the cases, both that and where they differ
// (inline flags such as (?i) are RE2's only), run through both languages.
"use strict";

// `pattern` searched in a name, or with `whole` matched as the whole name; null where
// JavaScript does not read it as a regular expression.
function compilePattern(pattern, whole) {
  try {
    return new RegExp(whole ? "^(?:" + pattern + ")$" : pattern);
  } catch (error) {
    return null;
  }
}

// A name without its argument list, what drop matches whole (pprof's drop_frames), as the
// command line's --drop-frames cuts it (emit/stacks/allocator_frames.cpp,
// simplified_function_name): at the first "(" that does not begin "(anonymous namespace)"
// or end "operator()". "f(int)" is "f"; "(anonymous namespace)::f(int)" is
// "(anonymous namespace)::f".
function simplifiedName(name) {
  const reserved = ["(anonymous namespace)", "operator()"];
  let from = 0;
  while ((from = name.indexOf("(", from)) >= 0) {
    const word = reserved.find((w) => {
      const start = w.indexOf("(");
      return from >= start && name.substr(from - start, w.length) === w;
    });
    if (word === undefined) {
      return name.slice(0, from);
    }
    from += word.length - word.indexOf("(");
  }
  return name;
}

// Whether a frame's name is one a refinement of `kind` ("focus", "ignore", "hide": a match
// anywhere in the name; "drop": the whole name without its arguments) with
// `pattern` applies to. `pattern` is a valid one (compilePattern says).
function refinementTest(kind, pattern) {
  const re = compilePattern(pattern, kind === "drop");
  if (kind === "drop") {
    return (name) => re.test(simplifiedName(name));
  }
  return (name) => re.test(name);
}

// A search's test of a name: the text as a regular expression, or, where it is none yet
// (a search typed letter by letter passes through "foo("), as plain text.
function searchTest(text) {
  const re = compilePattern(text, false);
  if (!re) {
    return (name) => name.indexOf(text) >= 0;
  }
  return (name) => re.test(name);
}
