// SPDX-License-Identifier: MIT
// What the SVG flame graph's script and the HTML report's flame graph do alike, over a tree
// of frames given by functions of a node (its children, its value): the share of the frame
// zoomed into that matching frames hold, and the line that tells it.
"use strict";

// The value the frames of `root`'s subtree that `matches` hold, each stack counted once,
// at its outermost match (a match inside a counted match is not counted again). `root`
// itself counts with `countRoot`.
function matchedValue(root, childrenOf, matches, valueOf, countRoot) {
  let sum = 0;
  const pending = [root];
  while (pending.length) {
    const node = pending.pop();
    if ((countRoot || node !== root) && matches(node)) {
      sum += valueOf(node);
      continue;
    }
    for (const child of childrenOf(node)) {
      pending.push(child);
    }
  }
  return sum;
}

// "Matched: 12.5% (AMOUNT)": `part` of `whole`, with the part written as `amount`.
function matchedLine(part, whole, amount) {
  return "Matched: " + (whole ? (100 * part / whole).toFixed(1) : "0.0") + "% (" + amount + ")";
}

// The ancestors of `node`, the root first, given each node's parent (-1 for the root).
function ancestorsOf(parentOf, node) {
  const found = [];
  for (let a = parentOf(node); a >= 0; a = parentOf(a)) {
    found.unshift(a);
  }
  return found;
}
