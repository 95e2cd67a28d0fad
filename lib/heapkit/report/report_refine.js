// SPDX-License-Identifier: MIT
// Hide and drop applied to the function-level tree the page opened on (report_tree.js):
// the same tree as merging every stack prefix again with the hidden frames left out and
// the dropped ones cut, made from the opened tree's subtrees: one with no hidden or
// dropped frame in it and no other subtree to merge with is copied as it is (a range of
// typed arrays, its numbers moved), so a million prefixes are mostly copied, not merged.
"use strict";

// Per node of `b`: 0 kept, 1 hidden (its callees go to its caller), 2 dropped (with all
// it calls, into its caller): its name's answer (goneNames), or its caller's drop.
function goneNodes(b, kinds) {
  const ofName = goneNames(kinds);
  const gone = new Uint8Array(b.count);
  for (let n = 1; n < b.count; n++) {
    gone[n] = gone[b.parent[n]] === 2 ? 2 : ofName[b.name[n]];
  }
  return gone;
}
// Per string id: 2 where a drop's test says yes, else 1 where a hide's does, else 0, each
// name answered by every test at once (forEachYes): a million nodes then cost an array's
// read each, where asking each node's name took a third of a hide on a million unnamed
// functions.
function goneNames(kinds) {
  const ofName = new Uint8Array(nameCount);
  kinds.hide.forEach((test) => forEachYes(test, (id) => { ofName[id] = Math.max(ofName[id], 1); }));
  kinds.drop.forEach((test) => forEachYes(test, (id) => { ofName[id] = 2; }));
  return ofName;
}

// Whether nodes `kids` of `b` are in string id order (they are when one node feeds them).
function inNameOrder(b, kids) {
  for (let i = 1; i < kids.length; i++) {
    if (b.name[kids[i]] < b.name[kids[i - 1]]) {
      return false;
    }
  }
  return true;
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
             end: new Int32Array(b.count), outer: new Uint8Array(b.count)};
  const to = new Int32Array(b.count);
  // Nodes [from, end) of `b` (callees of the same node next to each other, each with all
  // it calls, nothing in them hidden or dropped) copied below node `parent`: their
  // outermost marks too, as the names left out above them are none of theirs.
  function copy(from, end, parent) {
    const delta = t.count - from;
    if (end - from > 64) {
      t.name.set(b.name.subarray(from, end), t.count);
      t.outer.set(b.outer.subarray(from, end), t.count);
    } else { // (a few nodes: two views made for them took longer, and their collection)
      for (let k = from; k < end; k++) {
        t.name[k + delta] = b.name[k];
        t.outer[k + delta] = b.outer[k];
      }
    }
    for (let k = from; k < end; k++) {
      const p = b.parent[k];
      t.parent[k + delta] = p < from ? parent : p + delta;
      t.end[k + delta] = b.end[k] + delta;
      to[k] = k + delta;
    }
    t.count += end - from;
  }
  const onPath = new Int32Array(nameCount); // the names above the node being made
  // A node called `name` below `parent`, fed by the nodes `feeds` of `b` (one, or several
  // whose paths are the same once hidden frames are left out): its callees are theirs and
  // those of the hidden nodes they call, the same names merged.
  function make(feeds, name, parent) {
    const id = t.count++;
    t.name[id] = name;
    t.parent[id] = parent;
    if (id) {
      t.outer[id] = onPath[name]++ === 0 ? 1 : 0;
    }
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
    if (feeds.length > 1 && !inNameOrder(b, kids)) {
      kids.sort((x, y) => b.name[x] - b.name[y]);
    }
    const clean = (c) => goneBefore[b.end[c]] === goneBefore[c];
    for (let i = 0; i < kids.length;) {
      const c = kids[i];
      let j = i + 1;
      while (j < kids.length && b.name[kids[j]] === b.name[c]) {
        j++;
      }
      if (j > i + 1 || !clean(c)) {
        make(kids.slice(i, j), b.name[c], id);
      } else {
        // With the clean callees alone by name that follow it in `b`: one range.
        let end = b.end[c];
        while (j < kids.length && kids[j] === end && clean(kids[j]) &&
               (j + 1 === kids.length || b.name[kids[j + 1]] !== b.name[kids[j]])) {
          end = b.end[kids[j++]];
        }
        copy(c, end, id);
      }
      i = j;
    }
    t.end[id] = t.count;
    if (id) {
      onPath[name]--;
    }
  }
  make([0], -1, -1);
  if (t.count < 0.9 * b.count) { // much hidden or dropped: the rest let go
    ["name", "parent", "end", "outer"].forEach((k) => { t[k] = t[k].slice(0, t.count); });
  }
  return {tree: t, to: to};
}

// Tree `b` (no hide or drop) with the hide and drop of `kinds`. A raw node's node is its
// node's in `b` carried over (rawNodeIn, report_tree.js): the leaves ask, and a tooltip,
// not the millions of prefixes as the tree is made.
function refinedShape(b, kinds) {
  const {tree, to} = refinedTree(b, goneNodes(b, kinds));
  tree.fnOf = b.fnOf;
  tree.to = to;
  return tree;
}
