// SPDX-License-Identifier: MIT
// The reader's state in the page's address, so that a reload, Back and a shared link
// show what was shown: the view, sample type, side, orientation, thread, window, sort,
// every refinement in order, the search, the selection and the zoom. In the fragment
// (location.hash), not the query: Chromium keeps a file: URL's query too, but a fragment
// is what every browser keeps for a local file, and it never reaches a server (the served
// page, /debug/pprof/ui, has a query of its own). Each change is a history entry (Back
// undoes it) but the search's keystrokes, which replace one another.
"use strict";

const REFINEMENT_KINDS = ["focus", "ignore", "hide", "drop"];

// The frames from the root's child to the zoomed frame, by name: a node's index would
// name another frame in a report written again.
function zoomPath() {
  return ancestorsOf((n) => tree.parent[n], state.zoom).concat([state.zoom]).slice(1)
    .map((n) => nameOf(tree.name[n]));
}
// The node at a path of names from the root, or the root where the path is not there.
function nodeAtPath(path) {
  let n = 0;
  for (const name of path) {
    const next = tree.children[n].find((kid) => nameOf(tree.name[kid]) === name);
    if (next === undefined) {
      return 0;
    }
    n = next;
  }
  return n;
}

// The state as a fragment: "#" and what differs from the page's first state.
function stateAddress() {
  const p = new URLSearchParams();
  if (state.view !== "top") {
    p.set("view", state.view);
  }
  if (state.type !== D.type) {
    p.set("type", D.types[state.type].name);
  }
  if (state.side !== "new") {
    p.set("side", state.side);
  }
  if (state.orientation !== "icicle") {
    p.set("orientation", state.orientation);
  }
  if (state.thread >= 0) {
    p.set("thread", state.thread);
  }
  if (state.from !== 0 || state.to !== D.columns.length - 1) {
    p.set("window", (state.from + 1) + "-" + (state.to + 1));
  }
  if (state.sort !== firstState.sort || state.sortDown !== firstState.sortDown) {
    p.set("sort", (state.sortDown ? "" : "+") + state.sort);
  }
  state.refinements.forEach((r) => p.append(r.kind, r.pattern));
  if (state.selected >= 0) {
    p.set("select", nameOf(state.selected));
  }
  if (state.zoom > 0) {
    zoomPath().forEach((name) => p.append("zoom", name));
  }
  if (state.search) {
    p.set("search", state.search);
  }
  const text = p.toString();
  return text ? "#" + text : "";
}

let firstState = null;
let shownAddress = "";

// Reads `hash` into the state (what it leaves out as the page opened), and the controls.
function readAddress(hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  Object.assign(state, firstState, {refinements: []});
  // "#flame" alone: the address the report's links used before there was more.
  state.view = hash === "#flame" ? "flame" : p.get("view") || "top";
  const type = D.types.findIndex((t) => t.name === p.get("type"));
  state.type = type >= 0 ? type : D.type;
  state.side = p.get("side") === "base" ? "base" : "new";
  state.orientation = p.get("orientation") === "flame" ? "flame" : "icicle";
  state.thread = p.has("thread") ? Number(p.get("thread")) : -1;
  const span = /^(\d+)-(\d+)$/.exec(p.get("window") || "");
  if (span && Number(span[1]) >= 1 && Number(span[1]) <= Number(span[2]) &&
      Number(span[2]) <= D.columns.length) {
    state.from = Number(span[1]) - 1;
    state.to = Number(span[2]) - 1;
  }
  const sort = p.get("sort");
  if (sort) {
    state.sortDown = sort[0] !== "+";
    state.sort = sort.replace(/^\+/, "");
  }
  for (const [kind, pattern] of p) {
    if (REFINEMENT_KINDS.indexOf(kind) >= 0 && compilePattern(pattern, false)) {
      state.refinements.push({kind: kind, pattern: pattern});
    }
  }
  state.search = p.get("search") || "";
  state.selected = p.has("select") ? nameId(p.get("select")) : -1;
  buildTree();
  state.zoom = nodeAtPath(p.getAll("zoom"));
  computeValues();
  showStateInControls();
}

function showStateInControls() {
  $("type").value = state.type;
  $("side").value = state.side;
  $("orientation").value = state.orientation;
  $("search").value = state.search;
  $("thread").value = state.thread;
  $("from").value = state.from;
  $("to").value = state.to;
}

// After each render: the address follows the state, a new history entry for each change
// but the search's.
function rememberState() {
  const address = stateAddress();
  if (address === shownAddress) {
    return;
  }
  const searchOnly = (a) => a.replace(/(^#|&)search=[^&]*$/, "");
  const url = location.pathname + location.search + (address || "#");
  if (searchOnly(address) === searchOnly(shownAddress)) {
    history.replaceState(null, "", url);
  } else {
    history.pushState(null, "", url);
  }
  shownAddress = address;
}

// The page's state from its address as it opens, and again on Back and Forward.
function setupAddress() {
  firstState = Object.assign({}, state);
  readAddress(location.hash);
  shownAddress = stateAddress();
  window.addEventListener("popstate", () => {
    withProgress("Going back\u2026", nodeCount > SLOW_NODES, () => {
      readAddress(location.hash);
      shownAddress = stateAddress();
      render();
    });
  });
}
