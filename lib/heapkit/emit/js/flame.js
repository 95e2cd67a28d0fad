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

// A frame's label in `room` characters, as emit/flame/labels.cpp's fitted_label (the
// shared vectors hold them together): whole if it fits, else its first room - 2
// characters and "..", or "" when fewer than 3 fit; an unnamed frame's label
// ("file+0xOFFSET") keeps its address and loses the end of its file name instead.
function fittedLabel(name, room) {
  if (!(room >= 3)) {
    return "";
  }
  const fits = Math.floor(room);
  if (name.length <= fits) { // UTF-16 units are never fewer than characters
    return name;
  }
  const characters = Array.from(name);
  if (characters.length <= fits) {
    return name;
  }
  const address = /^(.+)([+!]0x[0-9a-f]*)$/.exec(name);
  if (address && address[2].length + 3 <= fits) {
    return fittedLabel(address[1], fits - address[2].length) + address[2];
  }
  return characters.slice(0, fits - 2).join("") + "..";
}

// Fits `name` into `pixels` with `measure` (a string's drawn width): the estimate of
// `charWidth` a character first (all there is without `measure`), then a character less while the drawn text is wider, so
// that no label runs past its frame whatever the font.
function measuredLabel(name, pixels, charWidth, measure) {
  let room = Math.floor(pixels / charWidth);
  let label = fittedLabel(name, room);
  while (label && measure && measure(label) > pixels) {
    room = Math.min(room, Array.from(label).length) - 1;
    label = fittedLabel(name, room);
  }
  return label;
}
