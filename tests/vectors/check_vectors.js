// SPDX-License-Identifier: MIT
// node check_vectors.js VECTORS.json FILE.js...: the pages' JavaScript (emit/js's
// matcher.js, amount.js and flame.js, loaded as the pages load them: plain scripts, one after the
// other) run through the vectors the C++ is run through too
// (tests/unit/test_vectors_filters_and_amounts.cpp). Prints each failure and
// "vectors: N passed, N failed" (not at a line's start: .ci/run adds up the lines that begin
// so, one per stage); exits 1 on a failure.
"use strict";
const fs = require("fs");
const vm = require("vm");

const [vectorsPath, ...files] = process.argv.slice(2);
const page = vm.createContext({});
for (const file of files) {
  vm.runInContext(fs.readFileSync(file, "utf8"), page, {filename: file});
}
const vectors = JSON.parse(fs.readFileSync(vectorsPath, "utf8"));
let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) {
    passed++;
  } else {
    failed++;
    console.log("FAIL: " + what);
  }
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// focus, ignore and hide each test a name alike; the search too, for a valid pattern.
function checkMatches(pattern, matches) {
  check(page.compilePattern(pattern, false) !== null, `${pattern}: refused`);
  for (const kind of ["focus", "ignore", "hide"]) {
    const test = page.refinementTest(kind, pattern);
    const found = vectors.names.filter((name) => test(name));
    check(same(found, matches), `${kind} ${pattern}: matched ${JSON.stringify(found)}`);
  }
  const search = page.searchTest(pattern);
  const found = vectors.names.filter((name) => search(name));
  check(same(found, matches), `search ${pattern}: matched ${JSON.stringify(found)}`);
}

for (const vector of vectors.search) {
  checkMatches(vector.pattern, vector.matches);
}
for (const pattern of vectors.invalid) {
  check(page.compilePattern(pattern, false) === null, `${pattern}: not refused`);
}
for (const vector of vectors.differ) {
  if (vector.js === null) {
    check(page.compilePattern(vector.pattern, false) === null, `${vector.pattern}: not refused`);
  } else {
    checkMatches(vector.pattern, vector.js);
  }
}
// drop: the whole name, or the name without its arguments (pprof's drop_frames).
function checkDrop(pattern, matches) {
  const test = page.refinementTest("drop", pattern);
  const found = vectors.names.filter((name) => test(name));
  check(same(found, matches), `drop ${pattern}: matched ${JSON.stringify(found)}`);
}
for (const vector of vectors.drop) {
  checkDrop(vector.pattern, vector.matches);
}
for (const v of vectors.amounts) {
  const text = page.amountText(v.value, v.bytes);
  check(text === v.text, `amount ${v.value} ${v.bytes}: ${text}, expected ${v.text}`);
}
for (const v of vectors.percents) {
  const text = page.percentText(v.part, v.total);
  check(text === v.text + "%", `percent ${v.part}/${v.total}: ${text}, expected ${v.text}%`);
}
for (const v of vectors.thousands) {
  const text = page.withThousands(v.value);
  check(text === v.text, `thousands ${v.value}: ${text}, expected ${v.text}`);
}
for (const v of vectors.labels) {
  const text = page.fittedLabel(v.name, v.room);
  check(text === v.label, `label ${v.name} in ${v.room}: ${text}, expected ${v.label}`);
}
console.log(`vectors: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
