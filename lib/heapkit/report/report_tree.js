// SPDX-License-Identifier: MIT
// Refinement and the function-level tree: frames merged by function name as --text and
// the flame graph merge them, after the reader's focus, ignore, hide and drop (their
// patterns: emit/js/matcher.js), and each tree node's values. A million stacks make
// millions of nodes: the tree is typed arrays, its nodes numbered in depth-first order,
// so that a node's subtree is the range [n, tree.end[n]) and its children are n + 1,
// tree.end[n + 1], ... (no object per node).
"use strict";

// A test's answers, two bits a string id (0: not yet tested, 1: no, 2: yes), four ids a
// byte: a search and each refinement kept keep theirs, a million names apiece.
function answersFor(count) {
  return new Uint8Array((count + 3) >> 2);
}
function answerOf(known, id) {
  return (known[id >> 2] >> ((id & 3) << 1)) & 3;
}
function setAnswer(known, id, answer) {
  const shift = (id & 3) << 1;
  known[id >> 2] = (known[id >> 2] & ~(3 << shift)) | (answer << shift);
}
// The first string id not yet tested, or -1.
function firstUnanswered(known) {
  for (let i = 0; i < known.length; i++) {
    const b = known[i];
    if ((b & 3) && (b & 12) && (b & 48) && (b & 192)) {
      continue;
    }
    for (let id = i << 2; id < Math.min((i + 1) << 2, nameCount); id++) {
      if (!answerOf(known, id)) {
        return id;
      }
    }
  }
  return -1;
}

// A test of a name (matcher.js) as a test of a string id, each id tested once: its
// answers in `known` (answersFor), which may come with some made; byId.yes lists the ids
// it found yes while they are few (a sixteenth of the names; then null). Once a sixteenth
// of a big page's names have been asked (a million-node tree asks them all, in its order),
// every other one is tested at once, in id order: the strings read in the order they lie
// in memory take a fraction of the time; where the pattern is `plain` text (no character
// a regular expression reads otherwise), they are all answered at once from where it occurs
// in the strings' one text (answerPlain). byId.ask(id) tests one without counting it
// (asked in id order already); byId.askAll() answers every one; byId.known is the
// answers' array.
function testById(test, known = answersFor(nameCount), plain = null) {
  let untilAll = nameCount > SLOW_NODES ? nameCount >> 4 : Infinity;
  const foundYes = (id) => {
    if (byId.yes && byId.yes.length < nameCount >> 4) {
      byId.yes.push(id);
    } else {
      byId.yes = null;
    }
  };
  const ask = (id) => {
    if (!answerOf(known, id)) {
      const yes = test(nameOf(id));
      setAnswer(known, id, yes ? 2 : 1);
      if (yes) {
        foundYes(id);
      }
    }
  };
  let answeredAll = false; // (a kept test asked for all again answers nothing again)
  const askAll = () => {
    if (answeredAll) {
      return;
    }
    answeredAll = true;
    untilAll = Infinity;
    if (plain && !plain.includes("\0")) {
      answerPlain(known, plain, foundYes);
      return;
    }
    for (let id = 0; id < nameCount; id++) {
      ask(id);
    }
  };
  const byId = (id) => {
    if (!answerOf(known, id)) {
      if (--untilAll === 0) {
        askAll();
      }
      ask(id);
    }
    return answerOf(known, id) === 2;
  };
  byId.yes = [];
  byId.ask = ask;
  byId.askAll = askAll;
  byId.known = known;
  return byId;
}
// Every string id `test` (a testById) says yes to, each given to `visit`: every name
// answered at once first (askAll), then read from the test's list of them where it kept
// one, else from its answers, skipping each byte of four answers with no yes in it.
function forEachYes(test, visit) {
  test.askAll();
  if (test.yes) {
    test.yes.forEach(visit);
    return;
  }
  const known = test.known;
  for (let i = 0; i < known.length; i++) {
    if (known[i] & 0xaa) { // a yes (2) in one of its four answers
      for (let id = i << 2; id < Math.min((i + 1) << 2, nameCount); id++) {
        if (answerOf(known, id) === 2) {
          visit(id);
        }
      }
    }
  }
}
// Every string id not yet answered answered for a plain `text`: yes where the text occurs
// in its string (one indexOf over the strings' one text, a NUL ending each: a million names
// in a few milliseconds, where a test of each took over a hundred), no elsewhere. `found`
// is told each id newly found yes.
function answerPlain(known, text, found) {
  const fresh = known.slice(); // the answers made before: kept
  for (let i = 0; i < known.length; i++) {
    const b = known[i];
    known[i] = b | (~(b | (b >> 1)) & 0x55); // each pair still 0 (not asked): 1, no
  }
  for (let at = stringText.indexOf(text); at >= 0;) {
    const id = idStartingAt(at);
    if (!answerOf(fresh, id)) {
      setAnswer(known, id, 2);
      found(id);
    }
    at = stringText.indexOf(text, stringStarts[id + 1]);
  }
}

// The reader's refinements, by kind. A pattern's test is kept (a million names take a
// while to test): a refinement undone, or the same pattern used again, tests nothing.
const testsOfPattern = new Map(); // "drop=" or "" and the pattern: its testById (the last 4)
function refinementTests() {
  const kinds = {focus: [], ignore: [], hide: [], drop: []};
  state.refinements.forEach((r) => {
    const key = (r.kind === "drop" ? "drop=" : "") + r.pattern;
    let test = testsOfPattern.get(key);
    if (!test) {
      const plain = r.kind !== "drop" && isPlainText(r.pattern) ? r.pattern : null;
      test = testById(refinementTest(r.kind, r.pattern), answersFor(nameCount), plain);
      if (testsOfPattern.size === 4) {
        testsOfPattern.delete(testsOfPattern.keys().next().value); // the oldest
      }
      testsOfPattern.set(key, test);
    }
    kinds[r.kind].push(test);
  });
  return kinds;
}

// The raw nodes merged by function name below their caller, in the order met (parents
// first), for a page whose writer sent no tree: m.fnOf[raw node] is its merged node. Node
// 0 is the root ("all"). Each node's (parent, name) is found in an open-addressed hash
// table of node ids.
function mergedFunctions() {
  const fnOf = new Int32Array(nodeCount);
  const name = new Int32Array(nodeCount + 1);
  const parent = new Int32Array(nodeCount + 1);
  name[0] = -1;
  parent[0] = -1;
  let count = 1;
  let size = 1024;
  while (size < nodeCount * 1.5) {
    size *= 2;
  }
  // Per slot: its node's parent, name and id (0: empty; the root is never a key), side
  // by side so that a probe reads one cache line.
  const slots = new Int32Array(size * 3);
  const mask = size - 1;
  for (let n = 0; n < nodeCount; n++) {
    const p = D.parents[n];
    const id = nodeName(n);
    const parentFn = p < 0 ? 0 : fnOf[p];
    let slot = ((Math.imul(parentFn, 0x9e3779b1) ^ Math.imul(id, 0x85ebca77)) & mask) * 3;
    let child = slots[slot + 2];
    while (child && (slots[slot] !== parentFn || slots[slot + 1] !== id)) {
      slot = slot + 3 === slots.length ? 0 : slot + 3;
      child = slots[slot + 2];
    }
    if (!child) {
      child = count++;
      slots[slot] = parentFn;
      slots[slot + 1] = id;
      slots[slot + 2] = child;
      name[child] = id;
      parent[child] = parentFn;
    }
    fnOf[n] = child;
  }
  return {count: count, name: name, parent: parent, fnOf: fnOf};
}

// The merged nodes numbered again depth-first, each node's callees by string id (a
// million names are not sorted as the page opens): the tree (count, name, parent, end)
// and each raw node's node in it (fnOf).
function depthFirst(m) {
  const count = m.count;
  // Children lists (CSR) filled in string id order: the nodes bucketed by name, then
  // each appended to its parent's list.
  const byName = new Int32Array(nameCount + 1);
  for (let n = 1; n < count; n++) {
    byName[m.name[n] + 1]++;
  }
  for (let r = 0; r < nameCount; r++) {
    byName[r + 1] += byName[r];
  }
  const ordered = new Int32Array(count);
  for (let n = 1; n < count; n++) {
    ordered[byName[m.name[n]]++] = n;
  }
  const first = new Int32Array(count + 1);
  for (let n = 1; n < count; n++) {
    first[m.parent[n] + 1]++;
  }
  for (let n = 0; n < count; n++) {
    first[n + 1] += first[n];
  }
  const fill = first.slice(0, count);
  const kids = new Int32Array(Math.max(count - 1, 0));
  for (let i = 0; i < count - 1; i++) {
    const n = ordered[i];
    kids[fill[m.parent[n]]++] = n;
  }
  // Depth first: the stack holds merged nodes, the last child pushed first.
  const newId = new Int32Array(count);
  const t = {count: count, name: new Int32Array(count), parent: new Int32Array(count),
             end: new Int32Array(count)};
  const stack = new Int32Array(count);
  let top = 0;
  let next = 0;
  stack[top++] = 0;
  while (top) {
    const n = stack[--top];
    const id = next++;
    newId[n] = id;
    t.name[id] = m.name[n];
    t.parent[id] = n ? newId[m.parent[n]] : -1;
    for (let k = first[n + 1] - 1; k >= first[n]; k--) {
      stack[top++] = kids[k];
    }
  }
  subtreeEnds(t);
  for (let n = 0; n < nodeCount; n++) {
    m.fnOf[n] = newId[m.fnOf[n]];
  }
  t.fnOf = m.fnOf;
  return t;
}

// A subtree ends where the next node not under it starts: ends found from the last node.
function subtreeEnds(t) {
  for (let n = t.count - 1; n >= 0; n--) {
    if (t.end[n] === 0) {
      t.end[n] = n + 1;
    }
    const p = t.parent[n];
    if (p >= 0 && t.end[p] < t.end[n]) {
      t.end[p] = t.end[n];
    }
  }
}

// The tree without hide or drop as the writer sent it (function_tree.cpp: each raw node's
// tree node as a step from its parent's, in LEB128 varints), the same as
// depthFirst(mergedFunctions(...)) makes: no merge of millions of prefixes as the page opens.
function sentTree() {
  const steps = D.functionSteps;
  const fnOf = new Int32Array(nodeCount);
  let count = 1;
  let at = 0;
  for (let n = 0; n < nodeCount; n++) {
    let step = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = steps[at++];
      step |= (byte & 127) << shift;
      if (byte < 128) {
        break;
      }
    }
    const p = D.parents[n];
    fnOf[n] = step + (p < 0 ? 0 : fnOf[p]);
    if (fnOf[n] >= count) {
      count = fnOf[n] + 1;
    }
  }
  delete D.functionSteps;
  const t = {count: count, name: new Int32Array(count), parent: new Int32Array(count),
             end: new Int32Array(count), fnOf: fnOf};
  t.name[0] = -1;
  t.parent[0] = -1;
  for (let n = 0; n < nodeCount; n++) {
    const p = D.parents[n];
    t.name[fnOf[n]] = nodeName(n);
    t.parent[fnOf[n]] = p < 0 ? 0 : fnOf[p];
  }
  subtreeEnds(t);
  return t;
}

// Raw node n's node in tree t: t.fnOf gives its node in the tree the page opened on, and
// a tree refined by hide or drop maps those (t.to; report_refine.js).
function rawNodeIn(t, n) {
  return t.to ? t.to[t.fnOf[n]] : t.fnOf[n];
}

// Per leaf, its node in the tree the page opened on (t.fnOf is that tree's, refined or
// not): made once, as a million leaves looked up through two arrays at random took most of
// choosing them again after each hide.
let openedLeaves = null;
function openedLeafNodes(t) {
  if (!openedLeaves || openedLeaves.fnOf !== t.fnOf) {
    const nodes = new Int32Array(D.leaves.length);
    for (let leaf = 0; leaf < nodes.length; leaf++) {
      nodes[leaf] = t.fnOf[D.leaves[leaf]];
    }
    openedLeaves = {fnOf: t.fnOf, nodes: nodes};
  }
  return openedLeaves.nodes;
}

// Per string id, what its name does to a path's marks (focusMarks): bit f where focus f
// matches it, -1 where an ignore does; each name answered by every test at once
// (forEachYes), then read by id: a test asked for each node's name as the walk met it took
// two thirds of a focus on a million unique names. (Int8: up to six focus patterns' bits.)
function nameMarks(kinds) {
  const byName = new (kinds.focus.length < 7 ? Int8Array : Int32Array)(nameCount);
  kinds.focus.forEach((test, f) => forEachYes(test, (id) => { byName[id] |= 1 << f; }));
  kinds.ignore.forEach((test) => forEachYes(test, (id) => { byName[id] = -1; }));
  return byName;
}

// Per node of the tree the page opened on (plainShape: its paths are the raw stacks'
// frames by name, whatever hide and drop did since), which focus patterns matched on the
// path, as bits, or -1 where an ignore matched or the path starts on a thread other than
// the chosen one. Walked from parent to child in the tree's depth-first order, reading
// each name from the tree's own array (the raw nodes' names, read through their frames at
// random, took a fifth of a focus on a million stacks). A subtree whose marks can no longer
// change (every focus matched and nothing to ignore, or left out) is filled at once: below
// a focus on "main", the millions of nodes it calls are not looked at.
function focusMarks(kinds) {
  const o = plainShape();
  const marks = new Int32Array(o.count);
  const byName = nameMarks(kinds);
  const allFocus = (1 << kinds.focus.length) - 1;
  const settled = (bits) => bits < 0 || (bits === allFocus && kinds.ignore.length === 0);
  // The chosen thread by its name, as the tree merges roots (a thread's label is one frame
  // a name: report_data.cpp's frame_id).
  const threadName = state.thread >= 0 ? frameNames[state.thread] : -1;
  for (let n = 1; n < o.count;) {
    const p = o.parent[n];
    const id = o.name[n];
    const above = p > 0 ? marks[p] : threadName >= 0 && id !== threadName ? -1 : 0;
    const bits = above | byName[id]; // -1 stays -1
    if (settled(bits)) {
      marks.fill(bits, n, o.end[n]);
      n = o.end[n];
    } else {
      marks[n++] = bits;
    }
  }
  return {marks: marks, allFocus: allFocus};
}

// Per leaf (a stack), whether it is kept: on the chosen thread, through every focus, past
// no ignore (focusMarks, where one asks), and not all hidden or dropped (keep); and its tree
// node, or the root where it is left out (no stack ends at the root): the sums of each type
// and side read one array, not three (node).
function keptLeaves(t, kinds) {
  const keep = new Uint8Array(D.leaves.length);
  const focus = t.choosing ? focusMarks(kinds) : null;
  const opened = openedLeafNodes(t);
  const to = t.to;
  // Unrefined, each leaf's node is its opened one (the root where left out, in both): the
  // same array, not 4 bytes a leaf again.
  const nodeOf = to || focus ? new Int32Array(keep.length) : opened;
  for (let leaf = 0; leaf < keep.length; leaf++) {
    const fn = to ? to[opened[leaf]] : opened[leaf]; // (rawNodeIn)
    const kept = fn > 0 && (!focus || focus.marks[opened[leaf]] === focus.allFocus);
    keep[leaf] = kept ? 1 : 0;
    nodeOf[leaf] = kept ? fn : 0;
  }
  return {keep: keep, node: nodeOf};
}

// Per tree node, whether its function is not also above it (recursion): cum counts a
// stack once, at its outermost occurrence. The open nodes are a stack, left as a node
// past their subtree comes.
function outermost(t) {
  const onPath = new Int32Array(nameCount);
  const outer = new Uint8Array(t.count);
  const open = new Int32Array(t.count);
  let top = 0;
  for (let n = 1; n < t.count; n++) {
    while (top && t.end[open[top - 1]] <= n) {
      onPath[t.name[open[--top]]]--;
    }
    outer[n] = onPath[t.name[n]]++ === 0 ? 1 : 0;
    open[top++] = n;
  }
  return outer;
}

// Node n's children, as an array (for the nodes a view draws or follows), by string id:
// drawFlame puts those it draws in name order.
function kidsOf(n, t) {
  const of = t || tree;
  const kids = [];
  for (let k = n + 1; k < of.end[n]; k = of.end[k]) {
    kids.push(k);
  }
  return kids;
}

// Every node of function `id` in tree t, depth-first: the tree's names read (a few
// milliseconds on a million nodes) for the one function the callers and callees follow,
// rather than an index of every function's nodes kept (4 bytes a node and a start per
// string id: 19 MiB on a million unnamed addresses).
function nodesNamed(t, id) {
  const nodes = [];
  const name = t.name;
  for (let n = 1; n < t.count; n++) {
    if (name[n] === id) {
      nodes.push(n);
    }
  }
  return nodes;
}

// The tree's shape (nodes, names, fnOf and to, outer) after hide and drop: focus, ignore and a
// thread keep it and choose leaves only. Kept: the shape without hide or drop (the one
// hide and drop refine: report_refine.js, and an undo comes back to), and the one in use
// (a refined shape is let go once another is used: made again in a fraction of a second,
// it is not worth its memory).
function treeShape(t) {
  t.outer = t.outer || outermost(t); // (a refined tree has its own)
  t.nodesOf = (id) => nodesNamed(t, id);
  // tree.children[n]: node n's children as an array, for code written against a tree of
  // arrays (a view that follows a few nodes).
  t.children = new Proxy({}, {get: (_, key) => kidsOf(Number(key), t)});
  return t;
}
const shapes = new Map(); // the hide and drop patterns, in order: the shape
function plainShape() {
  let t = shapes.get("");
  if (!t) {
    t = treeShape(D.functionSteps ? sentTree() : depthFirst(mergedFunctions()));
    shapes.set("", t);
  }
  return t;
}
function shapeFor(kinds) {
  const key = state.refinements.filter((r) => r.kind === "hide" || r.kind === "drop")
    .map((r) => r.kind + "=" + r.pattern).join("\n");
  for (const other of Array.from(shapes.keys())) {
    if (other !== "" && other !== key) {
      shapes.delete(other);
    }
  }
  let t = key === "" ? plainShape() : shapes.get(key);
  if (!t) {
    t = treeShape(refinedShape(plainShape(), kinds));
    shapes.set(key, t);
  }
  return t;
}

let tree = null; // the function-level tree after refinement
function buildTree() {
  const kinds = refinementTests();
  const t = Object.assign({}, shapeFor(kinds));
  // Whether a focus, an ignore or a thread chooses leaves: without, the values are summed
  // from the opened tree's (valuesOf), and the leaves are looked at only where a view asks
  // (tree.leaves(): a million of them, at random, took a fifth of a hide).
  t.choosing = kinds.focus.length > 0 || kinds.ignore.length > 0 || state.thread >= 0;
  let leaves = null;
  t.leaves = () => leaves || (leaves = keptLeaves(t, kinds));
  tree = t;
}

// An array for sums of a column's `values`: int32 where every value is at least 0 and
// all of them add up below 2^31 (a subtree's sum is then below it too), else float64:
// half the memory on a million functions. (A column of integers is an Int32Array, or
// narrower: report_data.js.)
function sumsArray(values, count) {
  if (!(values instanceof Float64Array)) {
    let sum = 0;
    for (let i = 0; i < values.length && sum >= 0; i++) {
      sum = values[i] < 0 ? -1 : sum + values[i];
    }
    if (sum >= 0 && sum <= 0x7fffffff) {
      return new Int32Array(count);
    }
  }
  return new Float64Array(count);
}

// Whether sums of `values` come out the same in any order: integers whose magnitudes add
// up below 2^53 (float64 adds them exactly).
function sumsExact(values) {
  if (values instanceof Int32Array) {
    return true; // (a million below 2^31 each)
  }
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    if (!Number.isInteger(values[i])) {
      return false;
    }
    sum += Math.abs(values[i]);
  }
  return sum < 2 ** 53;
}

// Each leaf's value summed into its node: `nodeOf` (by leaf) gives the node, the root
// where the leaf is left out.
function leafSums(values, nodeOf, count) {
  const self = sumsArray(values, count);
  for (let leaf = 0; leaf < values.length; leaf++) {
    self[nodeOf[leaf]] += values[leaf];
  }
  self[0] = 0; // (the leaves left out)
  return self;
}

// Per column's values (D.columns[c][type]): the self values of the tree the page opened
// on, every leaf kept, where their sums are exact, else null; those of the columns in use
// kept (a change's two sides). A tree that hide or drop alone refined sums them along its
// `to`, in node order, not a million leaves' at random: the same sums, as they are exact.
const openedSelves = new Map();
function openedSelf(values) {
  if (!openedSelves.has(values)) {
    const plain = plainShape();
    const self = sumsExact(values) ? leafSums(values, openedLeafNodes(plain), plain.count) : null;
    if (openedSelves.size === (columns().base >= 0 ? 2 : 1)) {
      openedSelves.delete(openedSelves.keys().next().value); // the oldest
    }
    openedSelves.set(values, self);
  }
  return openedSelves.get(values);
}

// Tree t's self values from the opened tree's `opened`: each opened node's into its node
// in t (a hidden node's into its caller's; a node all hidden or dropped into the root,
// which holds none).
function selfFromOpened(t, opened) {
  if (!t.to) {
    return opened; // the opened tree itself (nothing writes into a tree's values)
  }
  const self = new opened.constructor(t.count);
  const to = t.to;
  for (let n = 1; n < to.length; n++) {
    self[to[n]] += opened[n];
  }
  self[0] = 0;
  return self;
}

// Values of the current type: self and total per tree node, of one column.
function valuesOf(column) {
  const count = tree.count;
  const values = column >= 0 ? D.columns[column][state.type] : null;
  const opened = values && !tree.choosing ? openedSelf(values) : null;
  const self = !values ? new Int32Array(count)
    : opened ? selfFromOpened(tree, opened) : leafSums(values, tree.leaves().node, count);
  const total = self.slice();
  const parent = tree.parent;
  for (let n = count - 1; n > 0; n--) {
    total[parent[n]] += total[n];
  }
  return {self: self, total: total};
}

// The values of the new side and, in a change, the base.
let now = null;
let base = null;
function computeValues() {
  const c = columns();
  now = valuesOf(c.now);
  base = c.base >= 0 ? valuesOf(c.base) : null;
}
// The value a frame's width follows.
function width(n) {
  return base && state.side === "base" ? base.total[n] : now.total[n];
}
