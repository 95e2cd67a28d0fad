// SPDX-License-Identifier: MIT
// Names that fit: a C++ or Rust function's name shortened step by step, as pprof's web UI
// shortens what its flame graph draws, so that a narrow frame still says which function it
// is. From the whole name, its forms are: without parameters, trailing qualifiers and
// return type (what pprof's demangler gives with demangle=templates); without template
// arguments (pprof's default demangling); pprof's short name (a namespace dropped before
// Class::method, an anonymous namespace dropped); then that name's ends after each "::" or
// ".". A frame shows the first that fits; the tooltip, the selection and the lists keep the
// whole name.
"use strict";

// C++'s operator symbols, the longest first.
const OPERATOR_SYMBOLS = ["<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
  "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "->", ",", "<", ">", "+", "-", "*", "/",
  "%", "^", "&", "|", "~", "!", "="];

// The end of an operator's name that starts at `i` ("operator" there, not inside a word):
// its symbol ("<<", "()", "[]", "new[]") is no bracket.
function operatorEnd(name, i) {
  if (!name.startsWith("operator", i) || /\w/.test(name[i - 1] || "") || /\w/.test(name[i + 8] || "")) {
    return -1;
  }
  let j = i + 8;
  while (name[j] === " ") {
    j++;
  }
  if (name.startsWith("()", j) || name.startsWith("[]", j)) {
    return j + 2;
  }
  // The longest operator symbol there: "operator+<char>" is operator+ with a template's
  // arguments, "operator<=>" one symbol.
  const symbol = OPERATOR_SYMBOLS.find((op) => name.startsWith(op, j));
  if (symbol) {
    // "operator< <char>": the space before a template's arguments is the operator's.
    return j + symbol.length + (name.startsWith(" <", j + symbol.length) ? 1 : 0);
  }
  const word = /^\w+(\[\])?/.exec(name.slice(j)); // new, delete[], a conversion's type
  return word ? j + word[0].length : j;
}

const OPENING = "(<[{";
const CLOSING = ")>]}";

// Calls visit(i, depth) for each character of `name` outside an operator's symbol, with
// the bracket depth before it; visit may return false to stop.
function scanBrackets(name, visit) {
  let depth = 0;
  for (let i = 0; i < name.length; i++) {
    const end = operatorEnd(name, i);
    if (end > 0) {
      i = end - 1;
      continue;
    }
    if (visit(i, depth) === false) {
      return;
    }
    if (OPENING.indexOf(name[i]) >= 0) {
      depth++;
    } else if (CLOSING.indexOf(name[i]) >= 0 && !(name[i] === ">" && name[i - 1] === "-")) {
      depth = Math.max(0, depth - 1);
    }
  }
}

// A C++ signature's name alone: "long* ns::f<int>(int) const" is "ns::f<int>". A name
// with no parameter list at its end (C, Rust) is returned as it is.
function withoutParameters(name) {
  let open = -1;
  let close = -1;
  scanBrackets(name, (i, depth) => {
    if (depth === 0 && name[i] === "(") {
      open = i;
    } else if (depth === 1 && name[i] === ")" && open >= 0) {
      close = i;
    }
  });
  if (open <= 0 || close < open || !/^(\s*(const|volatile|&&?|noexcept))*\s*$/.test(name.slice(close + 1))) {
    return name;
  }
  const head = name.slice(0, open);
  let space = -1; // the return type ends at the last space outside brackets
  scanBrackets(head, (i, depth) => {
    if (depth === 0 && head[i] === " ") {
      space = i;
    }
  });
  return space >= 0 ? head.slice(space + 1) : head;
}

// `name` without its template arguments: "ns::Pool<Block>::fill" is "ns::Pool::fill", a
// Rust turbofish ("::<T>") goes with its "::", and a Rust path's "<T as Trait>::f" is
// T's: "T::f".
function withoutTemplates(name) {
  if (name[0] === "<") {
    let end = -1;
    let as = -1;
    scanBrackets(name, (i, depth) => {
      if (depth === 1 && as < 0 && name.startsWith(" as ", i)) {
        as = i;
      }
      if (depth === 1 && name[i] === ">") {
        end = i;
        return false;
      }
      return true;
    });
    if (end > 0) {
      return withoutTemplates(name.slice(1, as > 0 ? as : end)) + withoutTemplates(name.slice(end + 1));
    }
  }
  let out = "";
  let start = 0;
  scanBrackets(name, (i, depth) => {
    if (name[i] === "<" && depth === 0 && !(name[i - 1] === "-")) {
      out += name.slice(start, name.endsWith("::", i) ? i - 2 : i);
      start = -1;
    } else if (name[i] === ">" && depth === 1 && start < 0) {
      start = i + 1;
    }
  });
  return start >= 0 ? out + name.slice(start) : out;
}

// pprof's short name of a C++ function: the anonymous namespace dropped, and the
// namespaces before the last Class::method whose namespaces are plain words (the rest
// after the method dropped too: "a::B::f()::$_1::operator()" is "B::f").
function pprofShortName(name) {
  const plain = name.replace(/^\(anonymous namespace\)::/, "");
  const parts = plain.split("::");
  for (let j = parts.length - 2; j >= 1; j--) {
    if (!parts.slice(0, j).every((p) => /^[_a-zA-Z]\w*$/.test(p)) || !/^_*[A-Z]\w*$/.test(parts[j])) {
      continue;
    }
    const rest = parts.slice(j + 1).join("::");
    const method = /^~?[_a-zA-Z]\w*/.exec(rest);
    if (method) {
      const templates = rest[method[0].length] === "<" && rest.lastIndexOf(">") > method[0].length
        ? rest.slice(method[0].length, rest.lastIndexOf(">") + 1) : "";
      return parts[j] + "::" + method[0] + templates;
    }
  }
  return plain;
}

// The ends of `name` after each "::" and ".", longest first, `name` itself first.
function nameEnds(name) {
  const ends = [name];
  const separator = /::|\./g;
  let found;
  while ((found = separator.exec(name)) !== null) {
    if (separator.lastIndex < name.length) {
      ends.push(name.slice(separator.lastIndex));
    }
  }
  return ends;
}

// Each form of `name`, as above. An unnamed frame (module!0xSTART, file+0xOFFSET) and a
// thread's or dump's label have one form; a plain C name, its own.
function nameForms(name) {
  const forms = {full: name, noParameters: name, noTemplates: name, short: name, labels: [name]};
  if (/[+!]0x[0-9a-f]*$/.test(name)) {
    return forms;
  }
  forms.noParameters = withoutParameters(name);
  forms.noTemplates = withoutTemplates(forms.noParameters).trim();
  forms.short = pprofShortName(forms.noTemplates);
  const labels = [name, forms.noParameters, forms.noTemplates];
  if (name.indexOf("::") >= 0) {
    labels.push(...nameEnds(forms.short));
  }
  forms.labels = labels.filter((label, i) => label && labels.indexOf(label) === i);
  return forms;
}

// A frame's label in `room` characters: the first of its forms that fits, else the
// shortest cut to fit (fittedLabel). Kept per string id, as the graph asks for every frame.
const labelForms = new Map();
function frameLabel(id, name, room) {
  let labels = labelForms.get(id);
  if (!labels) {
    labels = nameForms(name).labels;
    labelForms.set(id, labels);
  }
  if (!(room >= 3)) {
    return "";
  }
  for (const label of labels) {
    if (label.length <= room && Array.from(label).length <= room) {
      return label;
    }
  }
  return fittedLabel(labels[labels.length - 1], room);
}
