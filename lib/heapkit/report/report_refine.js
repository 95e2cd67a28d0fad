// SPDX-License-Identifier: MIT
// Hide and drop applied to the function-level tree the page opened on (report_tree.js):
// the same tree as merging every stack prefix again with the hidden frames left out and
// the dropped ones cut, made from the opened tree's subtrees: one with no hidden or
// dropped frame in it and no other subtree to merge with is copied as it is (a range of
// typed arrays, its numbers moved), so a million prefixes are mostly copied, not merged.
"use strict";

// Per node of `b`: 0 kept, 1 hidden (its callees go to its caller), 2 dropped (with all
// it calls, into its caller).
function goneNodes(b, kinds) {
  const gone = new Uint8Array(b.count);
  for (let n = 1; n < b.count; n++) {
    const id = b.name[n];
    if (gone[b.parent[n]] === 2 || anyOf(kinds.drop, id)) {
      gone[n] = 2;
    } else if (anyOf(kinds.hide, id)) {
      gone[n] = 1;
    }
  }
  return gone;
}

// The refined tree made depth first as report_tree.js numbers a tree (callees in string
// id order): `to` gives each node of `b` its node in it (a hidden or dropped node: its
// caller's), `gone` says which are hidden or dropped, and `goneBefore[n]` how many of
// them come before node n (a subtree [n, end[n]) has none when the two counts are equal).
function refinedTree(b, gone) {
  const goneBefore = new Int32Array(b.count + 1);
  for (let n = 0; n < b.count; n++) {
    goneBefore[n + 1] = goneBefore[n] + (gone[n] ? 1 : 0);
  }
  const t = {count: 0, name: new Int32Array(b.count), parent: new Int32Array(b.count),
             end: new Int32Array(b.count)};
  const to = new Int32Array(b.count);
  // Subtree `c` (nothing in it hidden or dropped) copied below node `parent`.
  function copy(c, parent) {
    const delta = t.count - c;
    const end = b.end[c];
    t.name.set(b.name.subarray(c, end), t.count);
    for (let k = c; k < end; k++) {
      t.parent[k + delta] = b.parent[k] + delta;
      t.end[k + delta] = b.end[k] + delta;
      to[k] = k + delta;
    }
    t.parent[t.count] = parent;
    t.count += end - c;
  }
  // A node called `name` below `parent`, fed by the nodes `feeds` of `b` (one, or several
  // whose paths are the same once hidden frames are left out): its callees are theirs and
  // those of the hidden nodes they call, the same names merged.
  function make(feeds, name, parent) {
    const id = t.count++;
    t.name[id] = name;
    t.parent[id] = parent;
    const kids = [];
    for (let i = 0; i < feeds.length; i++) {
      const f = feeds[i];
      to[f] = id;
      for (let c = f + 1; c < b.end[f]; c = b.end[c]) {
        if (gone[c] === 2) {
          to.fill(id, c, b.end[c]); // dropped with all it calls
        } else if (gone[c] === 1) {
          feeds.push(c);
        } else {
          kids.push(c);
        }
      }
    }
    if (feeds.length > 1) {
      kids.sort((x, y) => b.name[x] - b.name[y]);
    }
    for (let i = 0; i < kids.length;) {
      const c = kids[i];
      let j = i + 1;
      while (j < kids.length && b.name[kids[j]] === b.name[c]) {
        j++;
      }
      if (j === i + 1 && goneBefore[b.end[c]] === goneBefore[c]) {
        copy(c, id);
      } else {
        make(kids.slice(i, j), b.name[c], id);
      }
      i = j;
    }
    t.end[id] = t.count;
  }
  make([0], -1, -1);
  return {tree: t, to: to};
}

// Tree `b` (no hide or drop) with the hide and drop of `kinds`, and each raw node's node.
function refinedShape(b, kinds) {
  const {tree, to} = refinedTree(b, goneNodes(b, kinds));
  tree.fnOf = new Int32Array(nodeCount);
  for (let n = 0; n < nodeCount; n++) {
    tree.fnOf[n] = to[b.fnOf[n]];
  }
  return tree;
}
