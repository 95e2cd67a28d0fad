// SPDX-License-Identifier: MIT
// Refinement and the function-level tree: frames merged by function name as --text and
// the flame graph merge them, after the reader's focus, ignore, hide and drop (their
// patterns: emit/js/matcher.js), and each tree node's values.
"use strict";

// A test of a name (matcher.js) as a test of a string id, each id tested once.
function testById(test) {
  const cache = new Map();
  return (id) => {
    let hit = cache.get(id);
    if (hit === undefined) {
      hit = test(S[id]);
      cache.set(id, hit);
    }
    return hit;
  };
}
function anyOf(tests, id) {
  return tests.some((test) => test(id));
}

// The reader's refinements, by kind.
function refinementTests() {
  const kinds = {focus: [], ignore: [], hide: [], drop: []};
  state.refinements.forEach((r) => kinds[r.kind].push(testById(refinementTest(r.kind, r.pattern))));
  return kinds;
}

// Per raw node, what its stack (the path from its root) holds: which focus patterns
// matched on it, as bits, whether an ignore pattern did, and its first node (its thread's,
// with --threads).
function stackMarks(kinds) {
  const marks = {
    focusBits: new Int32Array(nodeCount), ignored: new Uint8Array(nodeCount),
    rootOf: new Int32Array(nodeCount), allFocus: (1 << kinds.focus.length) - 1
  };
  for (let n = 0; n < nodeCount; n++) {
    const p = D.parents[n];
    const id = nodeName[n];
    marks.rootOf[n] = p < 0 ? n : marks.rootOf[p];
    let bits = p < 0 ? 0 : marks.focusBits[p];
    kinds.focus.forEach((test, f) => {
      if (test(id)) {
        bits |= 1 << f;
      }
    });
    marks.focusBits[n] = bits;
    marks.ignored[n] = (p >= 0 && marks.ignored[p]) || anyOf(kinds.ignore, id) ? 1 : 0;
  }
  return marks;
}

// The raw nodes merged by function name below their caller: t.fnOf[raw node] is its tree
// node. A hidden frame's node is its caller's; a dropped frame takes all it calls along
// into its caller. Node 0 is the root ("all").
function mergedFunctions(kinds) {
  const fnOf = new Int32Array(nodeCount);
  const cut = new Uint8Array(nodeCount);
  const t = {name: [-1], parent: [-1], children: [[]], fnOf: fnOf};
  const keys = new Map();
  for (let n = 0; n < nodeCount; n++) {
    const p = D.parents[n];
    const id = nodeName[n];
    const parentFn = p < 0 ? 0 : fnOf[p];
    if ((p >= 0 && cut[p]) || anyOf(kinds.drop, id)) {
      cut[n] = 1;
      fnOf[n] = parentFn; // cut with all it calls: its value goes to its caller
      continue;
    }
    if (anyOf(kinds.hide, id)) {
      fnOf[n] = parentFn;
      continue;
    }
    const key = parentFn * S.length + id;
    let child = keys.get(key);
    if (child === undefined) {
      child = t.name.length;
      keys.set(key, child);
      t.name.push(id);
      t.parent.push(parentFn);
      t.children.push([]);
      t.children[parentFn].push(child);
    }
    fnOf[n] = child;
  }
  return t;
}

// Per leaf (a stack), whether it is kept: on the chosen thread, through every focus, past
// no ignore, and not all hidden or dropped.
function keptLeaves(t, marks) {
  const keep = new Uint8Array(D.leaves.length);
  D.leaves.forEach((node, leaf) => {
    const thread = state.thread < 0 || D.nodeFrames[marks.rootOf[node]] === state.thread;
    keep[leaf] = thread && marks.focusBits[node] === marks.allFocus && !marks.ignored[node] &&
      t.fnOf[node] > 0 ? 1 : 0;
  });
  return keep;
}

// Per tree node, whether its function is not also above it (recursion): cum counts a
// stack once, at its outermost occurrence.
function outermost(t) {
  const count = t.name.length;
  const onPath = new Int32Array(S.length);
  const outer = new Uint8Array(count);
  const stack = [0];
  const leaving = [false];
  while (stack.length) {
    const node = stack.pop();
    const leave = leaving.pop();
    const name = t.name[node];
    if (leave) {
      if (node) {
        onPath[name]--;
      }
      continue;
    }
    if (node) {
      outer[node] = onPath[name]++ === 0 ? 1 : 0;
    }
    stack.push(node);
    leaving.push(true);
    for (const kid of t.children[node]) {
      stack.push(kid);
      leaving.push(false);
    }
  }
  return outer;
}

// Each function's outermost occurrences, for its callers and callees.
function occurrencesOf(t) {
  const occurrences = new Map();
  for (let o = 1; o < t.name.length; o++) {
    if (!t.outer[o]) {
      continue;
    }
    const list = occurrences.get(t.name[o]);
    if (list) {
      list.push(o);
    } else {
      occurrences.set(t.name[o], [o]);
    }
  }
  return occurrences;
}

// Callees stand on their caller sorted by name, as in the SVG flame graph.
function sortChildren(t) {
  const byName = (a, b) => (S[t.name[a]] < S[t.name[b]] ? -1 : 1);
  for (const children of t.children) {
    if (children.length > 1) {
      children.sort(byName);
    }
  }
}

let tree = null; // the function-level tree after refinement
function buildTree() {
  const kinds = refinementTests();
  const t = mergedFunctions(kinds);
  sortChildren(t);
  t.keepLeaf = keptLeaves(t, stackMarks(kinds));
  t.outer = outermost(t);
  t.occurrences = occurrencesOf(t);
  tree = t;
}

// Values of the current type: self and total per tree node, of one column.
function valuesOf(column) {
  const count = tree.name.length;
  const self = new Float64Array(count);
  if (column >= 0) {
    const values = D.columns[column][state.type];
    for (let leaf = 0; leaf < values.length; leaf++) {
      if (values[leaf] !== 0 && tree.keepLeaf[leaf]) {
        self[tree.fnOf[D.leaves[leaf]]] += values[leaf];
      }
    }
  }
  const total = Float64Array.from(self);
  for (let n = count - 1; n > 0; n--) {
    total[tree.parent[n]] += total[n];
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
