// SPDX-License-Identifier: MIT
// heapkit's HTML report: the data in <script id="data"> (report_data.cpp) turned into
// Top, a flame graph (root at the top), callers and callees, source lines, refinement and,
// for a series, a window over time. Plain JavaScript, no library, nothing fetched; text is
// written only through textContent. The report's files, in the order meson joins them
// (lib/heapkit/meson.build), after emit/js's: report_data.js (the data and what the views
// share), report_tree.js (refinement and the function tree), report_refine.js (hide and drop on
// that tree), report_top.js,
// report_names.js (names that fit), report_colours.js (by module, or by change),
// report_flame.js (the flame graph, tooltips), report_peek.js (callers and callees),
// report_source.js, report_graph.js, report_graph_layout.js, report_graph_view.js (the call
// graph: pprof's nodes and edges, laid out, drawn), report_trend.js (a suspect's growth in
// the window), report_series.js, report_address.js (the state in the address),
// report_page.js (the header, the events, the start).
"use strict";

// The data (report.cpp), gzipped and in base64: JSON, a NUL, and from the next multiple of
// 8 bytes the numeric tables the JSON's "binary" member locates, each [byte offset, count,
// "i32", "f64" or "u8" (varints, the count in bytes)], copied out as typed arrays: views
// would keep the whole inflated buffer alive, the JSON's bytes with it (on a million
// unnamed addresses, 39 MiB of names already parsed into strings).
function heapkitData() {
  const text = document.getElementById("data").textContent;
  const bytes = Uint8Array.fromBase64 ? Uint8Array.fromBase64(text) : base64Bytes(text);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).arrayBuffer().then(unpackData);
}
// Where Uint8Array.fromBase64 is missing (it takes a fifth of this loop's time in Chromium).
function base64Bytes(text) {
  const binary = atob(text); // spaces are skipped
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}
function unpackData(buffer) {
  const bytes = new Uint8Array(buffer);
  const end = bytes.indexOf(0);
  const data = JSON.parse(new TextDecoder().decode(bytes.subarray(0, end < 0 ? bytes.length : end)));
  const start = (end + 8) & ~7;
  function table(place) {
    if (Array.isArray(place[0])) {
      return place.map(table);
    }
    const [offset, count, kind] = place;
    const type = kind === "i32" ? Int32Array : kind === "u8" ? Uint8Array : Float64Array;
    return new type(buffer.slice(start + offset, start + offset + count * type.BYTES_PER_ELEMENT));
  }
  for (const name in data.binary) {
    data[name] = table(data.binary[name]);
  }
  delete data.binary;
  return data;
}

// What the page is doing, said as "#progress" while it takes long enough to be seen (over
// 200 ms: `slow`), `work` run once the words are painted; quick work is run at once.
// Returns a promise of work's end.
const SLOW_NODES = 200000; // raw nodes past which rebuilding the tree takes that long
function withProgress(words, slow, work) {
  if (!slow) {
    return Promise.resolve(work());
  }
  const note = document.getElementById("progress");
  note.textContent = words;
  note.hidden = false;
  return underWay(new Promise((painted) => requestAnimationFrame(() => setTimeout(painted, 0)))
    .then(work).finally(() => { note.hidden = true; }));
}
// The work under way (a search waiting for its keys to pause, a slow refinement): settled() resolves once
// there is none, for scripted checks.
const pending = new Set();
function underWay(promise) {
  pending.add(promise);
  promise.catch(() => {}).finally(() => pending.delete(promise));
  return promise;
}
function settled() {
  return pending.size ? Promise.allSettled(Array.from(pending)).then(settled) : Promise.resolve();
}

// Flags of a frame (D.frames holds name, file, line and flags per frame).
const FRAME_INLINED = 1;
const FRAME_THREAD = 2;
const FRAME_DUMP = 4;

let D = null; // the data
let S = null; // its strings
let nodeCount = 0; // raw nodes: distinct stack prefixes, lines kept apart
let nodeName = null; // per raw node: its function's string id
const sourceFiles = new Map(); // file string id: its excerpts
const sourceMissing = new Map(); // file string id: where it was looked for
let state = null; // what the reader chose

function readData(data) {
  D = data;
  S = D.strings;
  nodeCount = D.parentDistances.length;
  D.parents = D.parentDistances; // made each node's parent in place
  delete D.parentDistances;
  for (let n = 0; n < nodeCount; n++) {
    D.parents[n] = n - D.parents[n];
  }
  nodeName = new Int32Array(nodeCount);
  for (let n = 0; n < nodeCount; n++) {
    nodeName[n] = D.frames[D.nodeFrames[n] * 4];
  }
  (D.sourceFiles || []).forEach((f) => sourceFiles.set(f.file, f));
  (D.sourceMissing || []).forEach((f) => sourceMissing.set(f.file, f));
  state = {
    type: D.type, side: "new", view: "top", search: "", selected: -1, zoom: 0,
    refinements: [], sort: D.kind === "profile" ? "flat" : "dflat", sortDown: true,
    from: 0, to: D.columns.length - 1, thread: -1, orientation: "icicle"
  };
}

function $(id) {
  return document.getElementById(id);
}
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    e.setAttribute(k, attrs[k]);
  }
  if (text !== undefined) {
    e.textContent = text;
  }
  return e;
}

// Numbers as --text prints them, in the current type's unit (emit/js/amount.js).
function isBytes() {
  return D.types[state.type].unit === "bytes";
}
function quantity(value) {
  return amountText(value, isBytes());
}
function signed(value) {
  return (value > 0 ? "+" : "") + quantity(value);
}
function percent(part, total) {
  return percentText(part, total);
}

// Which columns the views compare. A profile: one column. A change: base and new. A
// series: the window's first and last.
function columns() {
  if (D.kind === "diff") {
    return {base: 0, now: 1};
  }
  if (D.kind === "series") {
    return {base: state.from === state.to ? -1 : state.from, now: state.to};
  }
  return {base: -1, now: 0};
}
