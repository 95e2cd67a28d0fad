// SPDX-License-Identifier: MIT
// Callers / Callees of the selected function: a list as pprof's Peek gives it (each caller
// and callee with its flat and cum, what passes over the call, and where the call is),
// and, one click away, the callers' and callees' trees drawn as flame graphs.
"use strict";

// The values the view follows: the chosen side's.
function peekValues() {
  return base && state.side === "base" ? base.total : now.total;
}

// What passes over each call into and out of function `id`: {callers, callees}, each a
// Map of function id to value. As pprof weighs a call graph's edges: a stack counts once
// for each call it makes (at its outermost occurrence: no node above makes the same call),
// and a function calling itself directly is no caller or callee of its own. Only the
// function's own nodes (tree.nodesOf) and their children are visited, each call checked
// up the stack.
function peekCalls(id, values) {
  const calls = {callers: new Map(), callees: new Map()};
  const name = tree.name;
  const parent = tree.parent;
  // True when a node above `from` (itself included) is `callee` called by `caller`.
  function madeAbove(from, caller, callee) {
    for (let a = from; a > 0; a = parent[a]) {
      if (name[a] === callee && parent[a] > 0 && name[parent[a]] === caller) {
        return true;
      }
    }
    return false;
  }
  function add(list, other, value) {
    list.set(other, (list.get(other) || 0) + value);
  }
  for (const n of tree.nodesOf(id)) {
    const p = parent[n];
    if (p > 0 && name[p] !== id && values[n] !== 0 && !madeAbove(parent[p], name[p], id)) {
      add(calls.callers, name[p], values[n]);
    }
    for (let k = n + 1; k < tree.end[n]; k = tree.end[k]) {
      if (name[k] !== id && values[k] !== 0 && !madeAbove(p, id, name[k])) {
        add(calls.callees, name[k], values[k]);
      }
    }
  }
  return calls;
}

// Where the calls are: per caller of `callers` (a Set of string ids: those the list shows),
// the lines of it that call `id`; per callee of `callees`, the lines of `id` that call it
// (file:line, as the frames have them). Each raw node and its parent are told apart by
// whether their frames are `id`'s (one array by frame, made first): only a call into or
// out of `id` reads names, and only a shown one is noted (reading two names for each of
// 2.6 M raw nodes, and noting main's 958 k callees, took most of the view on a million
// stacks).
function callSites(id, callers, callees) {
  const sites = {callers: new Map(), callees: new Map()};
  function note(list, other, frame) {
    const file = nameOf(frameFile(frame));
    if (!file) {
      return;
    }
    const where = file + ":" + frameLine(frame);
    const known = list.get(other) || [];
    if (known.indexOf(where) < 0) {
      known.push(where);
      list.set(other, known);
    }
  }
  const ofId = new Uint8Array(frameCount());
  for (let f = 0; f < ofId.length; f++) {
    ofId[f] = frameName(f) === id ? 1 : 0;
  }
  const parents = D.parents;
  const frames = D.nodeFrames;
  for (let n = 0; n < nodeCount; n++) {
    const p = parents[n];
    if (p < 0) {
      continue;
    }
    const here = ofId[frames[n]];
    if (here === ofId[frames[p]]) {
      continue; // no call of id's, or id calling itself
    }
    if (here) {
      const caller = nodeName(p);
      if (callers.has(caller)) {
        note(sites.callers, caller, frames[p]);
      }
    } else {
      const callee = nodeName(n);
      if (callees.has(callee)) {
        note(sites.callees, callee, frames[p]);
      }
    }
  }
  return sites;
}

// The files and lines of function `id`'s frames, each function's found once (a hover asks
// for them at every move).
const linesOfFunction = new Map();
function functionLines(id) {
  let found = linesOfFunction.get(id);
  if (!found) {
    found = findFunctionLines(id);
    linesOfFunction.set(id, found);
  }
  return found;
}
function findFunctionLines(id) {
  const found = [];
  for (let f = 0; f < frameCount(); f++) {
    if (frameName(f) === id && frameFile(f) !== 0) {
      const where = nameOf(frameFile(f)) + ":" + frameLine(f);
      if (found.indexOf(where) < 0) {
        found.push(where);
      }
    }
  }
  return found;
}

// "file:line", or the first and how many more.
function sitesText(sites) {
  if (!sites || !sites.length) {
    return "";
  }
  return sites[0] + (sites.length > 1 ? " (+" + (sites.length - 1) + " more)" : "");
}

// Per function of `ids`: its flat and cum on the chosen side, as Top sums them (its nodes
// in order, cum at the outermost), all summed in one walk of the tree: the few functions
// a list shows, not Top's million rows.
function functionFigures(ids) {
  const side = base && state.side === "base" ? base : now;
  const slot = new Int32Array(nameCount); // string id: its place in `sums`, plus one
  const sums = [];
  ids.forEach((id) => {
    if (!slot[id]) {
      sums.push([0, 0]);
      slot[id] = sums.length;
    }
  });
  for (let n = 1; n < tree.count; n++) {
    const s = slot[tree.name[n]];
    if (s) {
      sums[s - 1][0] += side.self[n];
      if (tree.outer[n]) {
        sums[s - 1][1] += side.total[n];
      }
    }
  }
  const known = new Map(ids.map((id) => [id, sums[slot[id] - 1]]));
  return {get: (id) => known.get(id)};
}

function peekRow(id, figures, call, whole, sites, kind) {
  const [flat, cum] = figures.get(id);
  const tr = el("tr", {"data-function": id, class: kind});
  const cells = [quantity(flat), percent(flat, whole), quantity(cum), percent(cum, whole),
                 call === null ? "" : quantity(call.value), call === null ? "" : percent(call.value, call.of)];
  cells.forEach((text) => tr.appendChild(el("td", {}, text)));
  const arrow = kind === "caller" ? "\u2191 " : kind === "callee" ? "\u2193 " : "";
  tr.appendChild(el("td", {class: "name", title: nameOf(id)}, arrow + nameOf(id)));
  tr.appendChild(el("td", {class: "site", title: (sites || []).join("\n")}, sitesText(sites)));
  if (id === state.selected && kind === "self") {
    tr.className += " sel";
  }
  return tr;
}

function groupRow(text) {
  const tr = el("tr", {class: "group"});
  tr.appendChild(el("td", {colspan: 8}, text));
  return tr;
}

// A group's rows (callers or callees, the heaviest first): the first PEEK_ROWS, then a
// row that draws the others, as a function called from thousands of places would take
// seconds to lay out (and its rows' figures to sum) at every selection.
const PEEK_ROWS = 100;
let peekAllOf = -1; // the function whose callers and callees are all drawn
function shownCalls(id, list) {
  return peekAllOf === id ? list.length : Math.min(list.length, PEEK_ROWS);
}
function appendCalls(body, id, list, kind, sites, row) {
  const shown = shownCalls(id, list);
  for (let i = 0; i < shown; i++) {
    body.appendChild(row(list[i][0], {value: list[i][1]}, sites.get(list[i][0]), kind));
  }
  if (shown < list.length) {
    let rest = 0;
    list.slice(shown).forEach(([, value]) => { rest += value; });
    const td = el("td", {colspan: 8});
    td.appendChild(el("button", {type: "button", "data-more": id}, "Show the other " +
      (list.length - shown) + (kind === "caller" ? " callers" : " callees") + " (calls: " +
      quantity(rest) + ")"));
    body.appendChild(el("tr", {class: "group"})).appendChild(td);
  }
}

// The list: callers (the heaviest call first), the function, its callees.
function renderPeekList(id) {
  const values = peekValues();
  const calls = peekCalls(id, values);
  const byValue = (m) => Array.from(m).sort((a, b) => b[1] - a[1] || (compareNames(a[0], b[0]) < 0 ? -1 : 1));
  const callers = byValue(calls.callers);
  const callees = byValue(calls.callees);
  const shownIds = (list) => list.slice(0, shownCalls(id, list)).map(([other]) => other);
  const sites = callSites(id, new Set(shownIds(callers)), new Set(shownIds(callees)));
  const figures = functionFigures([id, ...shownIds(callers), ...shownIds(callees)]);
  const whole = values[0];
  const cum = figures.get(id)[1];
  const head = el("tr");
  ["flat", "flat%", "cum", "cum%", "calls", "calls%", "function", "file:line"].forEach((h, i) => {
    head.appendChild(el("th", {class: i >= 6 ? "name" : ""}, h));
  });
  $("peek").tHead.replaceChildren(head);
  const body = document.createElement("tbody");
  const row = (other, call, where, kind) => {
    call.of = cum;
    return peekRow(other, figures, call, whole, where, kind);
  };
  body.appendChild(groupRow(callers.length ? "Called by (calls: what passes over the call)" : "Called by nothing (a root)"));
  appendCalls(body, id, callers, "caller", sites.callers, row);
  body.appendChild(peekRow(id, figures, null, whole, functionLines(id), "self"));
  body.appendChild(groupRow(callees.length ? "Calls" : "Calls nothing"));
  appendCalls(body, id, callees, "callee", sites.callees, row);
  $("peek").replaceChild(body, $("peek").tBodies[0]);
}

// The selected function's callees (its subtrees merged) and callers (the stacks above it,
// inverted and merged), each occurrence counted once (the outermost). Kept while the
// function, the tree and the values stay: hovering asks for them often.
let peekCache = {id: -1, tree: null, values: null, trees: null};
function peekTrees(id) {
  const values = peekValues();
  if (peekCache.id !== id || peekCache.tree !== tree || peekCache.values !== values) {
    peekCache = {id: id, tree: tree, values: values, trees: buildPeekTrees(id, values)};
  }
  return peekCache.trees;
}
// Callees stand on their caller sorted by name, as in the SVG flame graph.
function sortChildren(t) {
  const byName = (a, b) => (compareNames(t.names[a], t.names[b]) < 0 ? -1 : 1);
  for (const children of t.children) {
    if (children.length > 1) {
      children.sort(byName);
    }
  }
}
function buildPeekTrees(id, widths) {
  const callees = {names: [id], children: [[]], width: [0], keys: new Map()};
  const callers = {names: [id], children: [[]], width: [0], keys: new Map()};
  function add(t, parent, name, value) {
    const key = parent * nameCount + name;
    let c = t.keys.get(key);
    if (c === undefined) {
      c = t.names.length;
      t.keys.set(key, c);
      t.names.push(name);
      t.children.push([]);
      t.width.push(0);
      t.children[parent].push(c);
    }
    t.width[c] += value;
    return c;
  }
  // Per node of an occurrence's subtree: its node in the callees' tree.
  const into = new Map();
  for (const n of tree.nodesOf(id)) {
    if (!tree.outer[n] || widths[n] === 0) {
      continue;
    }
    callees.width[0] += widths[n];
    callers.width[0] += widths[n];
    let at = 0;
    for (let p = tree.parent[n]; p > 0; p = tree.parent[p]) {
      at = add(callers, at, tree.name[p], widths[n]);
    }
    into.clear();
    into.set(n, 0);
    for (let k = n + 1; k < tree.end[n];) {
      if (widths[k] === 0) {
        k = tree.end[k]; // nothing under it either
        continue;
      }
      into.set(k, add(callees, into.get(tree.parent[k]), tree.name[k], widths[k]));
      k++;
    }
  }
  [callers, callees].forEach((t) => {
    t.name = t.names;
    sortChildren(t);
  });
  return {callers: callers, callees: callees};
}

function renderPeekTrees(id) {
  const trees = peekTrees(id);
  const match = searchMatcher();
  const whole = width(0);
  $("callers-title").textContent = "Callers of " + nameOf(id) + " (" + quantity(trees.callers.width[0]) + ", " +
    percent(trees.callers.width[0], whole) + "): each row is called by the row below";
  $("callees-title").textContent = "Callees of " + nameOf(id);
  [["callers", trees.callers], ["callees", trees.callees]].forEach(([box, t]) => {
    drawFlame($(box), {names: t.names, children: t.children, width: t.width, root: 0,
                       diff: false, match: match});
  });
}

function renderPeek() {
  const id = state.selected;
  const chosen = id >= 0;
  $("peek").hidden = !chosen;
  $("peek-trees").hidden = !chosen;
  $("peek-title").textContent = chosen ? "Callers and callees of " + nameOf(id)
    : "Select a function (in Top or the flame graph) to see its callers and callees.";
  if (!chosen) {
    return;
  }
  renderPeekList(id);
  if ($("peek-trees").open) {
    renderPeekTrees(id);
  }
}

// A frame of the callers' or callees' tree: its name, what passes through it and where
// the function is.
function peekTooltipText(box, n) {
  const t = peekTrees(state.selected)[box];
  const whole = width(0);
  const lines = functionLines(t.names[n]);
  return nameOf(t.names[n]) + "\n" + quantity(t.width[n]) + " (" + percent(t.width[n], whole) + ")" +
    (lines.length ? "\n" + lines.slice(0, 8).join("\n") + (lines.length > 8 ? "\n..." : "") : "");
}

// Clicks and hovers in the view: a row or a frame selects its function; the trees are
// drawn when opened.
function setupPeek() {
  $("peek").addEventListener("click", (event) => {
    if (event.target.dataset.more !== undefined) {
      peekAllOf = Number(event.target.dataset.more);
      renderPeekList(peekAllOf);
      return;
    }
    const tr = event.target.closest("tr[data-function]");
    if (tr) {
      select(Number(tr.dataset.function));
    }
  });
  $("peek-trees").addEventListener("toggle", () => {
    if ($("peek-trees").open && state.selected >= 0) {
      renderPeekTrees(state.selected);
    }
  });
  ["callers", "callees"].forEach((box) => {
    $(box).addEventListener("click", (event) => {
      const n = event.target.dataset.node;
      if (n !== undefined) {
        select(peekTrees(state.selected)[box].names[Number(n)]);
      }
    });
    showTooltips($(box), (n) => peekTooltipText(box, n));
  });
}
