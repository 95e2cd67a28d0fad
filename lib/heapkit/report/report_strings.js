// SPDX-License-Identifier: MIT
// The data's strings (functions, files, modules, threads), by string id: one text of them
// all, each ended by a NUL (report_data.cpp), and where each starts. A million unnamed
// addresses as a string each took 32 bytes apiece (a string's header, its characters and
// its place in an array); as one text, a byte a character and 4 for its start. A string
// is cut from the text when asked for: what tests every name keeps its answers per id
// (testById, report_tree.js), and names are compared in place (compareNames).
"use strict";

let stringText = "";
let stringStarts = null; // Int32Array: each string id's start in stringText, then its end
let nameCount = 0; // string ids

function readStrings(text) {
  let count = 0;
  for (let at = text.indexOf("\0"); at >= 0; at = text.indexOf("\0", at + 1)) {
    count++;
  }
  const starts = new Int32Array(count + 1);
  let at = 0;
  for (let id = 0; id < count; id++) {
    starts[id] = at;
    at = text.indexOf("\0", at) + 1;
  }
  starts[count] = at;
  stringText = text;
  stringStarts = starts;
  nameCount = count;
}

// String id `id`'s text.
function nameOf(id) {
  return stringText.slice(stringStarts[id], stringStarts[id + 1] - 1);
}

// The string id of `text`, or -1 where no string is that text.
function nameId(text) {
  if (text.indexOf("\0") >= 0) {
    return -1;
  }
  const ended = text + "\0";
  for (let at = stringText.indexOf(ended); at >= 0; at = stringText.indexOf(ended, at + 1)) {
    if (at === 0 || stringText.charCodeAt(at - 1) === 0) {
      return idStartingAt(at);
    }
  }
  return -1;
}
function idStartingAt(at) {
  let low = 0;
  let high = nameCount - 1;
  while (low < high) {
    const mid = (low + high + 1) >>> 1;
    if (stringStarts[mid] <= at) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return low;
}

// Below 0, 0 or above 0 as string `a`'s text sorts before, with or after `b`'s (as `<`
// orders strings: by UTF-16 code units), without cutting either from the text.
function compareNames(a, b) {
  const aEnd = stringStarts[a + 1] - 1;
  const bEnd = stringStarts[b + 1] - 1;
  let i = stringStarts[a];
  let j = stringStarts[b];
  for (; i < aEnd && j < bEnd; i++, j++) {
    const step = stringText.charCodeAt(i) - stringText.charCodeAt(j);
    if (step !== 0) {
      return step;
    }
  }
  return (aEnd - i) - (bEnd - j);
}
