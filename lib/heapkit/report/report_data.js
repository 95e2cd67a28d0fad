// SPDX-License-Identifier: MIT
// heapkit's HTML report: the data in <script id="data"> (report_data.cpp) turned into
// Top, a flame graph (root at the top), callers and callees, source lines, refinement and,
// for a series, a window over time. Plain JavaScript, no library, nothing fetched; text is
// written only through textContent. The report's files, in the order meson joins them
// (lib/heapkit/meson.build), after emit/js's: report_data.js (the data and what the views
// share), report_strings.js (the strings, one text), report_tree.js (refinement and the
// function tree), report_refine.js (hide and drop on that tree), report_top.js,
// report_names.js (names that fit), report_colours.js (by module, or by change),
// report_flame.js (the flame graph, tooltips), report_peek.js (callers and callees),
// report_source.js, report_graph.js, report_graph_layout.js, report_graph_view.js (the call
// graph: pprof's nodes and edges, laid out, drawn), report_trend.js (a suspect's growth in
// the window), report_series.js, report_address.js (the state in the address),
// report_page.js (the header, the events, the start).
"use strict";

// The data (report.cpp), gzipped and in base64: JSON, a NUL, and from the next multiple of
// 8 bytes the tables the JSON's "binary" member locates, each [byte offset, count, "i32",
// "f64", "u8" (varints, the count in bytes) or "text" (strings each ended by a NUL, the
// count in bytes)]: the numbers copied out as typed arrays (views would keep the whole
// inflated buffer alive), the text decoded as one string.
function heapkitData() {
  const element = document.getElementById("data");
  const text = element.textContent;
  // Read once: its text, the page's base64 (37 MiB on a million unnamed addresses), would
  // stay in the document as long as the page (the renderer's memory 402 -> 366 MiB there).
  element.textContent = "";
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
    if (kind === "text") {
      return new TextDecoder().decode(bytes.subarray(start + offset, start + offset + count));
    }
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

// Flags of a frame (frameFlags).
const FRAME_INLINED = 1;
const FRAME_THREAD = 2;
const FRAME_DUMP = 4;

let D = null; // the data (its strings: report_strings.js)
let nodeCount = 0; // raw nodes: distinct stack prefixes, lines kept apart
const sourceFiles = new Map(); // file string id: its excerpts
const sourceMissing = new Map(); // file string id: where it was looked for
let state = null; // what the reader chose

function readData(data) {
  D = data;
  readStrings(D.strings);
  delete D.strings;
  nodeCount = D.parentDistances.length;
  D.parents = D.parentDistances; // made each node's parent in place
  delete D.parentDistances;
  for (let n = 0; n < nodeCount; n++) {
    D.parents[n] = n - D.parents[n];
  }
  readFrames();
  D.nodeFrames = narrowed(D.nodeFrames);
  D.columns = D.columns.map((column) => column.map(narrowed));
  (D.sourceFiles || []).forEach((f) => sourceFiles.set(f.file, f));
  (D.sourceMissing || []).forEach((f) => sourceMissing.set(f.file, f));
  state = {
    type: D.type, side: "new", view: "top", search: "", selected: -1, zoom: 0,
    refinements: [], sort: D.kind === "profile" ? "flat" : "dflat", sortDown: true,
    from: 0, to: D.columns.length - 1, thread: -1, orientation: "icicle"
  };
}

// The frames (the data's D.frames: name, file, line and flags per frame, and
// D.frameModules) as a column each, narrowed: 20 bytes a frame were a sixth of the tab
// on a million unnamed addresses. A frame's file, line, flags and module (its place) are
// kept for the frames that have one where those are few (an unnamed address has none),
// else per frame; files and modules are few, so coded (codedColumn).
let frameNames = null; // string ids
// {frames: those with a place, in order (null: every frame), files, lines, flags, modules}
let framePlaces = null;
function readFrames() {
  const frames = D.frames;
  const modules = D.frameModules || new Int32Array(frames.length / 4);
  const count = modules.length;
  const placed = (f) => frames[f * 4 + 1] || frames[f * 4 + 2] || frames[f * 4 + 3] || modules[f];
  let rows = [];
  for (let f = 0; f < count && rows; f++) {
    if (placed(f)) {
      rows.push(f);
      rows = rows.length < count / 4 ? rows : null;
    }
  }
  rows = rows && Int32Array.from(rows);
  const column = (k) => {
    const values = new Int32Array(rows ? rows.length : count);
    for (let r = 0; r < values.length; r++) {
      const f = rows ? rows[r] : r;
      values[r] = k < 4 ? frames[f * 4 + k] : modules[f];
    }
    return values;
  };
  frameNames = new Int32Array(count);
  for (let f = 0; f < count; f++) {
    frameNames[f] = frames[f * 4];
  }
  framePlaces = {frames: rows, files: codedColumn(column(1)), lines: narrowed(column(2)),
                 flags: narrowed(column(3)), modules: codedColumn(column(4))};
  delete D.frames;
  delete D.frameModules;
}
// Each frame's module (a string id), as an array made for a walk of every frame or leaf:
// a lookup in the frames' places is a bisection each.
function frameModulesByFrame() {
  const rows = framePlaces.frames;
  const modules = framePlaces.modules;
  const byFrame = new Int32Array(frameNames.length);
  for (let r = 0; r < (rows ? rows.length : byFrame.length); r++) {
    byFrame[rows ? rows[r] : r] = modules.values[modules.codes[r]];
  }
  return byFrame;
}
// The frames with flag `flag` (FRAME_THREAD, ...), in order.
function framesFlagged(flag) {
  const rows = framePlaces.frames;
  const found = [];
  for (let r = 0; r < framePlaces.flags.length; r++) {
    if (framePlaces.flags[r] & flag) {
      found.push(rows ? rows[r] : r);
    }
  }
  return found;
}
// Frame f's row in framePlaces, or -1 where it has no place.
function placeOf(f) {
  const rows = framePlaces.frames;
  if (!rows) {
    return f;
  }
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (rows[mid] < f) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low < rows.length && rows[low] === f ? low : -1;
}
function frameCount() {
  return frameNames.length;
}
function frameName(f) {
  return frameNames[f];
}
function frameFile(f) {
  const r = placeOf(f);
  return r < 0 ? 0 : framePlaces.files.values[framePlaces.files.codes[r]];
}
function frameLine(f) {
  const r = placeOf(f);
  return r < 0 ? 0 : framePlaces.lines[r];
}
function frameFlags(f) {
  const r = placeOf(f);
  return r < 0 ? 0 : framePlaces.flags[r];
}
function frameModule(f) {
  const r = placeOf(f);
  return r < 0 ? 0 : framePlaces.modules.values[framePlaces.modules.codes[r]];
}
// Raw node n's function (its frame's string id).
function nodeName(n) {
  return frameNames[D.nodeFrames[n]];
}

// `numbers` (an Int32Array) in a Uint8Array or a Uint16Array where every value fits:
// a million frames' lines and flags, a million stacks' object counts.
function narrowed(numbers) {
  if (!(numbers instanceof Int32Array)) {
    return numbers;
  }
  let low = 0;
  let high = 0;
  for (let i = 0; i < numbers.length; i++) {
    low = Math.min(low, numbers[i]);
    high = Math.max(high, numbers[i]);
  }
  if (low < 0 || high > 0xffff) {
    return numbers;
  }
  return high > 0xff ? new Uint16Array(numbers) : new Uint8Array(numbers);
}
// A column of few distinct values (a frame's file, its module) as those values and, per
// row, its value's index among them ({values, codes}: codes narrowed).
function codedColumn(numbers) {
  const codeOf = new Map();
  const values = [];
  const codes = new Int32Array(numbers.length);
  let last = NaN;
  let lastCode = 0;
  for (let i = 0; i < numbers.length; i++) {
    const v = numbers[i];
    if (v !== last) {
      lastCode = codeOf.get(v);
      if (lastCode === undefined) {
        lastCode = values.length;
        values.push(v);
        codeOf.set(v, lastCode);
      }
      last = v;
    }
    codes[i] = lastCode;
  }
  return {values: Int32Array.from(values), codes: narrowed(codes)};
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
