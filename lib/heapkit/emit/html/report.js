// SPDX-License-Identifier: MIT
// heapkit's HTML report: the data in <script id="data"> (report_data.cpp) turned into
// Top, a flame graph (root at the top), callers and callees, source lines, refinement and,
// for a series, a window over time. Plain JavaScript, no library, nothing fetched.
"use strict";
// The data: JSON, gzipped and in base64 (report.cpp), unpacked by the browser.
function heapkitData() {
  var text = document.getElementById("data").textContent.replace(/\s+/g, "");
  var binary = atob(text), bytes = new Uint8Array(binary.length);
  for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text().then(JSON.parse);
}

window.heapkitReady = heapkitData().then(function (D) {
  var S = D.strings;
  var FRAME_INLINED = 1, FRAME_THREAD = 2, FRAME_DUMP = 4;
  var nodeCount = D.parentDistances.length;
  D.parents = new Int32Array(nodeCount);
  for (var p = 0; p < nodeCount; p++) D.parents[p] = p - D.parentDistances[p];
  // Per raw node (a distinct stack prefix, lines kept apart): its function's string id.
  var nodeName = new Int32Array(nodeCount);
  for (var n = 0; n < nodeCount; n++) nodeName[n] = D.frames[D.nodeFrames[n] * 4];
  var leafOfNode = new Int32Array(nodeCount).fill(-1);
  var sourceFiles = new Map(), sourceMissing = new Map();
  (D.sourceFiles || []).forEach(function (f) { sourceFiles.set(f.file, f); });
  (D.sourceMissing || []).forEach(function (f) { sourceMissing.set(f.file, f); });
  D.leaves.forEach(function (node, leaf) { leafOfNode[node] = leaf; });

  var state = {
    type: D.type, side: "new", view: "top", search: "", selected: -1, zoom: 0,
    refinements: [], sort: D.kind === "profile" ? "flat" : "dflat", sortDown: true,
    from: 0, to: D.columns.length - 1, thread: -1, orientation: "icicle"
  };

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // --- numbers as --text prints them (emit/quantity.cpp) --------------------------------
  // fmt's "{:.2f}" rounds the double's exact value, a tie to even; toFixed takes a tie
  // up: 1664 B is 1.625 kB, "1.62kB" in --text and "1.63kB" from toFixed. A tie at two
  // decimals is a multiple of 1/8, so it is found, and broken, exactly.
  function fixed2(x) {
    var hundredths = x * 100, below = Math.floor(hundredths);
    if (!Number.isInteger(x * 8) || hundredths - below !== 0.5) return x.toFixed(2);
    var n = below % 2 === 0 ? below : below + 1;
    return (n < 0 ? "-" : "") + Math.floor(Math.abs(n) / 100) + "." + String(Math.abs(n) % 100).padStart(2, "0");
  }
  var UNITS = ["B", "kB", "MB", "GB", "TB"];
  function isBytes() { return D.types[state.type].unit === "bytes"; }
  function quantity(value) {
    if (!isBytes()) return String(value);
    var m = Math.abs(value), u = 0;
    while (m >= 1024 && u + 1 < UNITS.length) { m /= 1024; u++; }
    if (u === 0) return value + "B";
    return (value < 0 ? "-" : "") + fixed2(m) + UNITS[u];
  }
  function signed(value) { return (value > 0 ? "+" : "") + quantity(value); }
  function percent(part, total) {
    return total === 0 ? "0.00%" : fixed2(Math.abs(100 * part / total)) + "%";
  }

  // --- which columns the views compare ----------------------------------------------------
  // A profile: one column. A change: base and new. A series: the window's first and last.
  function columns() {
    if (D.kind === "diff") return {base: 0, now: 1};
    if (D.kind === "series") return {base: state.from === state.to ? -1 : state.from, now: state.to};
    return {base: -1, now: 0};
  }
  function isDiff() { return columns().base >= 0; }

  // --- refinement: which stacks and frames are kept ----------------------------------------
  function compile(pattern, whole) {
    try {
      return new RegExp(whole ? "^(?:" + pattern + ")$" : pattern);
    } catch (error) {
      return null;
    }
  }
  // drop matches whole function names, argument lists removed (pprof's drop_frames).
  function simplified(name) {
    var open = name.indexOf("(");
    return open > 0 && name.charAt(name.length - 1) === ")" && name.lastIndexOf("(anonymous", 0) !== 0
      ? name.slice(0, name.lastIndexOf("(")) : name;
  }
  function matcher(kind, pattern) {
    var re = compile(pattern, kind === "drop"), cache = new Map();
    return function (id) {
      var hit = cache.get(id);
      if (hit === undefined) {
        var name = S[id];
        hit = kind === "drop" ? re.test(name) || re.test(simplified(name)) : re.test(name);
        cache.set(id, hit);
      }
      return hit;
    };
  }

  // The function-level tree after refinement: frames merged by function name as --text and
  // the flame graph merge them. fnOf[raw node] is its node here, -1 where the stack is
  // left out. Node 0 is the root ("all").
  var tree = null;
  function buildTree() {
    var kinds = {focus: [], ignore: [], hide: [], drop: []};
    state.refinements.forEach(function (r) { kinds[r.kind].push(matcher(r.kind, r.pattern)); });
    var any = function (list, id) {
      for (var i = 0; i < list.length; i++) if (list[i](id)) return true;
      return false;
    };
    var focusBits = new Int32Array(nodeCount), ignored = new Uint8Array(nodeCount);
    var rootOf = new Int32Array(nodeCount); // the stack's first node: its thread's, with --threads
    var cut = new Uint8Array(nodeCount), fnOf = new Int32Array(nodeCount);
    var allFocus = (1 << kinds.focus.length) - 1;
    var t = {name: [-1], parent: [-1], children: [[]], fnOf: fnOf};
    var keys = new Map(), strings = S.length;
    for (var n = 0; n < nodeCount; n++) {
      var p = D.parents[n], id = nodeName[n];
      rootOf[n] = p < 0 ? n : rootOf[p];
      var bits = p < 0 ? 0 : focusBits[p];
      for (var f = 0; f < kinds.focus.length; f++) if (kinds.focus[f](id)) bits |= 1 << f;
      focusBits[n] = bits;
      ignored[n] = (p >= 0 && ignored[p]) || any(kinds.ignore, id) ? 1 : 0;
      var parentFn = p < 0 ? 0 : fnOf[p];
      if ((p >= 0 && cut[p]) || any(kinds.drop, id)) {
        cut[n] = 1;
        fnOf[n] = parentFn; // cut with all it calls: its value goes to its caller
        continue;
      }
      if (any(kinds.hide, id)) {
        fnOf[n] = parentFn;
        continue;
      }
      var key = parentFn * strings + id, child = keys.get(key);
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
    sortChildren(t);
    t.keepLeaf = new Uint8Array(D.leaves.length);
    D.leaves.forEach(function (node, leaf) {
      var thread = state.thread < 0 || D.nodeFrames[rootOf[node]] === state.thread;
      t.keepLeaf[leaf] = thread && focusBits[node] === allFocus && !ignored[node] && fnOf[node] > 0 ? 1 : 0;
    });
    // Whether a node's function is also above it (recursion): cum counts a stack once.
    var count = t.name.length, onPath = new Int32Array(strings), outer = new Uint8Array(count);
    var stack = [0], leaving = [false];
    while (stack.length) {
      var node = stack.pop(), leave = leaving.pop(), name = t.name[node];
      if (leave) { if (node) onPath[name]--; continue; }
      if (node) outer[node] = onPath[name]++ === 0 ? 1 : 0;
      stack.push(node); leaving.push(true);
      var kids = t.children[node];
      for (var k = 0; k < kids.length; k++) { stack.push(kids[k]); leaving.push(false); }
    }
    t.outer = outer;
    // Each function's outermost occurrences, for its callers and callees.
    t.occurrences = new Map();
    for (var o = 1; o < count; o++) {
      if (!outer[o]) continue;
      var list = t.occurrences.get(t.name[o]);
      if (list) list.push(o); else t.occurrences.set(t.name[o], [o]);
    }
    tree = t;
  }

  // Callees stand on their caller sorted by name, as in the SVG flame graph.
  function sortChildren(t) {
    var byName = function (a, b) { return S[t.name[a]] < S[t.name[b]] ? -1 : 1; };
    for (var n = 0; n < t.children.length; n++) {
      if (t.children[n].length > 1) t.children[n].sort(byName);
    }
  }

  // Values of the current type: self and total per tree node, for the new side and, in a
  // change, the base.
  function valuesOf(column) {
    var count = tree.name.length, self = new Float64Array(count);
    if (column >= 0) {
      var values = D.columns[column][state.type];
      for (var leaf = 0; leaf < values.length; leaf++) {
        if (values[leaf] !== 0 && tree.keepLeaf[leaf]) self[tree.fnOf[D.leaves[leaf]]] += values[leaf];
      }
    }
    var total = Float64Array.from(self);
    for (var n = count - 1; n > 0; n--) total[tree.parent[n]] += total[n];
    return {self: self, total: total};
  }
  var now = null, base = null;
  function computeValues() {
    var c = columns();
    now = valuesOf(c.now);
    base = c.base >= 0 ? valuesOf(c.base) : null;
  }
  // The value a frame's width follows.
  function width(n) {
    return base && state.side === "base" ? base.total[n] : now.total[n];
  }

  // --- search ------------------------------------------------------------------------------
  function searchMatcher() {
    if (!state.search) return null;
    var re = compile(state.search, false);
    if (!re) {
      var needle = state.search;
      return function (id) { return S[id].indexOf(needle) >= 0; };
    }
    var cache = new Map();
    return function (id) {
      var hit = cache.get(id);
      if (hit === undefined) { hit = re.test(S[id]); cache.set(id, hit); }
      return hit;
    };
  }

  // The share of the zoomed frame held by matching frames, each stack once (the outermost
  // match), as the SVG flame graph reports it.
  function matchedShare(match) {
    var sum = 0, stack = [state.zoom];
    while (stack.length) {
      var n = stack.pop();
      if (n !== state.zoom && match(tree.name[n])) { sum += width(n); continue; }
      var kids = tree.children[n];
      for (var k = 0; k < kids.length; k++) stack.push(kids[k]);
    }
    return sum;
  }

  // --- Top -----------------------------------------------------------------------------------
  // Top's rows depend on the tree and its values only: kept while they stay (a selection,
  // a search or a new sort order reuses them).
  var topCache = {tree: null, now: null, base: null, rows: null};
  function topRows() {
    if (topCache.tree === tree && topCache.now === now && topCache.base === base) {
      return topCache.rows.slice();
    }
    topCache = {tree: tree, now: now, base: base, rows: computeTopRows()};
    return topCache.rows.slice();
  }
  function computeTopRows() {
    var rows = new Map();
    function row(id) {
      var r = rows.get(id);
      if (!r) { r = {id: id, flat: 0, cum: 0, bflat: 0, bcum: 0}; rows.set(id, r); }
      return r;
    }
    for (var n = 1; n < tree.name.length; n++) {
      if (now.total[n] === 0 && (!base || base.total[n] === 0)) continue;
      var r = row(tree.name[n]);
      r.flat += now.self[n];
      if (tree.outer[n]) r.cum += now.total[n];
      if (base) {
        r.bflat += base.self[n];
        if (tree.outer[n]) r.bcum += base.total[n];
      }
    }
    var list = Array.from(rows.values());
    list.forEach(function (r) { r.dflat = r.flat - r.bflat; r.dcum = r.cum - r.bcum; });
    return list;
  }
  // The rows in the chosen order, sorted again only when the rows or the order change.
  function sortedTopRows() {
    var key = state.sort;
    if (!base && key === "dflat") key = "flat";
    var order = key + (state.sortDown ? " down" : " up");
    if (topCache.sorted && topCache.order === order && topCache.tree === tree &&
        topCache.now === now && topCache.base === base) {
      return topCache.sorted;
    }
    var rows = topRows();
    rows.sort(function (a, b) {
      var x = key === "name" ? 0 : Math.abs(b[key]) - Math.abs(a[key]);
      if (key === "name") x = S[a.id] < S[b.id] ? -1 : S[a.id] > S[b.id] ? 1 : 0;
      if (!state.sortDown) x = -x;
      return x || Math.abs(b.cum) - Math.abs(a.cum) || (S[a.id] < S[b.id] ? -1 : 1);
    });
    topCache.sorted = rows;
    topCache.order = order;
    return rows;
  }
  var SHOWN_ROWS = 1000;
  function renderTop() {
    var diff = !!base, rows = sortedTopRows(), match = searchMatcher();
    if (match) rows = rows.filter(function (r) { return match(r.id); });
    var total = now.total[0], baseTotal = base ? base.total[0] : 0;
    var heads = diff
      ? [["bflat", "base flat"], ["flat", "new flat"], ["dflat", "flat change"], ["bcum", "base cum"],
         ["cum", "new cum"], ["dcum", "cum change"], ["name", "function"]]
      : [["flat", "flat"], ["flatp", "flat%"], ["sump", "sum%"], ["cum", "cum"], ["cump", "cum%"],
         ["name", "function"]];
    var head = el("tr");
    heads.forEach(function (h) {
      var th = el("th", {"data-sort": h[0], class: h[0] === "name" ? "name" : ""},
                  h[1] + (state.sort === h[0] ? (state.sortDown ? " \u25bc" : " \u25b2") : ""));
      head.appendChild(th);
    });
    var thead = $("top").tHead;
    thead.replaceChildren(head);
    var body = document.createElement("tbody"), sum = 0;
    var shown = Math.min(rows.length, SHOWN_ROWS);
    for (var i = 0; i < shown; i++) {
      var r = rows[i], tr = el("tr", {"data-function": r.id});
      sum += r.flat;
      var cells = diff
        ? [quantity(r.bflat), quantity(r.flat), signed(r.dflat), quantity(r.bcum), quantity(r.cum), signed(r.dcum)]
        : [quantity(r.flat), percent(r.flat, total), percent(sum, total), quantity(r.cum), percent(r.cum, total)];
      cells.forEach(function (text, c) {
        var td = el("td", {}, text);
        if (diff && (c === 2 || c === 5)) {
          var change = c === 2 ? r.dflat : r.dcum;
          td.className = change > 0 ? "grow" : change < 0 ? "shrink" : "";
        }
        tr.appendChild(td);
      });
      tr.appendChild(el("td", {class: "name"}, S[r.id]));
      if (r.id === state.selected) tr.className = "sel";
      body.appendChild(tr);
    }
    $("top").replaceChild(body, $("top").tBodies[0]);
    $("top-note").textContent = rows.length > shown
      ? shown + " of " + rows.length + " functions shown: search to find the others"
      : rows.length + " functions" + (diff ? "; base total " + quantity(baseTotal) : "");
  }

  // --- flame graphs --------------------------------------------------------------------------
  var ROW = 17;
  function hue(id) {
    var h = 0, s = S[id];
    for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    return h;
  }
  function fill(n, view) {
    if (view.names[n] < 0) return "rgb(200,200,215)"; // the root, "all"
    if (view.diff) {
      var change = view.now[n] - view.base[n];
      var scale = view.maxChange > 0 ? Math.min(1, Math.abs(change) / view.maxChange) : 0;
      if (change === 0 || scale < 0.002) return "rgb(220,220,220)";
      var v = Math.round(220 * (1 - scale)) + 20;
      return change > 0 ? "rgb(255," + v + "," + v + ")" : "rgb(" + v + ",235," + v + ")";
    }
    var h = hue(view.names[n]);
    return "hsl(" + (200 + (h & 63)) + "," + (45 + ((h >> 6) & 15)) + "%," + (72 + ((h >> 10) & 7)) + "%)";
  }

  // Draws `view` (names, children, widths; the root at the top, or at the bottom where
  // view.flip says so) into `box`, from `view.root` whose ancestors, given in view.above,
  // are drawn full width and dimmed.
  function drawFlame(box, view) {
    var px = box.clientWidth || 1000;
    var frag = document.createDocumentFragment();
    var rootWidth = view.width[view.root];
    var depth = 0, match = view.match, rows = [];
    function frame(n, x, w, y, dim) {
      var d = document.createElement("div");
      d.style.cssText = "left:" + x + "px;width:" + w + "px;background:" + fill(n, view);
      rows.push([d, y]);
      // A label only where some of it can be read.
      if (w >= 14) d.textContent = n === 0 && view.allName ? view.allName : S[view.names[n]];
      d.dataset.node = n;
      var cls = dim ? "dim" : "";
      if (match && n !== 0 && match(view.names[n])) cls += " match";
      if (n !== 0 && view.names[n] === state.selected) cls += " sel";
      if (cls) d.className = cls;
      frag.appendChild(d);
      if (y > depth) depth = y;
    }
    var above = view.above || [];
    above.forEach(function (n, y) { frame(n, 0, px, y, true); });
    var top = above.length;
    if (rootWidth > 0) {
      var scale = px / rootWidth;
      var stack = [[view.root, 0, top]];
      while (stack.length) {
        var item = stack.pop(), n = item[0], x = item[1], y = item[2];
        var w = view.width[n] * scale;
        frame(n, x, w, y, false);
        var kids = view.children[n]; // sorted by name (sortChildren)
        var cx = x;
        for (var k = 0; k < kids.length; k++) {
          var cw = view.width[kids[k]] * scale;
          if (cw >= 1) stack.push([kids[k], cx, y + 1]);
          cx += Math.max(cw, 0);
        }
      }
    }
    // The rows are placed once the depth is known: a flame graph's root is at the bottom.
    rows.forEach(function (row) {
      row[0].style.top = (view.flip ? depth - row[1] : row[1]) * ROW + "px";
    });
    box.replaceChildren(frag);
    box.style.height = (depth + 1) * ROW + "px";
  }

  function mainView() {
    var diff = !!base, maxChange = 0;
    if (diff) {
      for (var n = 1; n < tree.name.length; n++) {
        maxChange = Math.max(maxChange, Math.abs(now.total[n] - base.total[n]));
      }
    }
    var above = [];
    for (var a = tree.parent[state.zoom]; a >= 0; a = tree.parent[a]) above.unshift(a);
    var widths = base && state.side === "base" ? base.total : now.total;
    return {names: tree.name, children: tree.children, width: widths, root: state.zoom,
            above: above, diff: diff, now: now.total, base: base ? base.total : null,
            maxChange: maxChange, match: searchMatcher(), allName: "all"};
  }

  function renderFlame() {
    var view = mainView();
    view.flip = state.orientation === "flame";
    drawFlame($("flame"), view);
    if (view.flip && state.view === "flame") {
      // However deep the graph, the page shows its root: scrolled to the graph's bottom.
      var bottom = $("flame").getBoundingClientRect().bottom;
      if (bottom > window.innerHeight) window.scrollBy(0, bottom - window.innerHeight);
    }
    var crumbs = $("crumbs");
    crumbs.replaceChildren();
    view.above.concat([state.zoom]).forEach(function (n, i) {
      if (i > 0) crumbs.appendChild(document.createTextNode(" \u203a "));
      var a = el("a", {"data-node": n}, n === 0 ? "all" : S[tree.name[n]]);
      crumbs.appendChild(a);
    });
  }

  // The selected function's callees (its subtrees merged) and callers (the stacks above it,
  // inverted and merged), each occurrence counted once (the outermost).
  function peekTrees(id) {
    var callees = {names: [id], children: [[]], width: [0], keys: new Map()};
    var callers = {names: [id], children: [[]], width: [0], keys: new Map()};
    function add(t, parent, name, value) {
      var key = parent * S.length + name, c = t.keys.get(key);
      if (c === undefined) {
        c = t.names.length;
        t.keys.set(key, c);
        t.names.push(name); t.children.push([]); t.width.push(0);
        t.children[parent].push(c);
      }
      t.width[c] += value;
      return c;
    }
    var widths = base && state.side === "base" ? base.total : now.total;
    var occurrences = tree.occurrences.get(id) || [];
    for (var i = 0; i < occurrences.length; i++) {
      var n = occurrences[i];
      if (widths[n] === 0) continue;
      callees.width[0] += widths[n];
      callers.width[0] += widths[n];
      var at = 0;
      for (var p = tree.parent[n]; p > 0; p = tree.parent[p]) at = add(callers, at, tree.name[p], widths[n]);
      var stack = [[n, 0]];
      while (stack.length) {
        var item = stack.pop(), kids = tree.children[item[0]];
        for (var k = 0; k < kids.length; k++) {
          if (widths[kids[k]] === 0) continue;
          stack.push([kids[k], add(callees, item[1], tree.name[kids[k]], widths[kids[k]])]);
        }
      }
    }
    [callers, callees].forEach(function (t) { t.name = t.names; sortChildren(t); });
    return {callers: callers, callees: callees};
  }

  function renderPeek() {
    var id = state.selected;
    if (id < 0) {
      $("callers-title").textContent = "Select a function (in Top or the flame graph) to see its callers and callees.";
      $("callees-title").textContent = "";
      $("callers").replaceChildren(); $("callees").replaceChildren();
      return;
    }
    var trees = peekTrees(id), match = searchMatcher();
    var whole = width(0);
    $("callers-title").textContent = "Callers of " + S[id] + " (" + quantity(trees.callers.width[0]) + ", " +
      percent(trees.callers.width[0], whole) + "): each row is called by the row below";
    $("callees-title").textContent = "Callees of " + S[id];
    [["callers", trees.callers], ["callees", trees.callees]].forEach(function (pair) {
      var t = pair[1];
      drawFlame($(pair[0]), {names: t.names, children: t.children, width: t.width, root: 0,
                             diff: false, match: match});
    });
  }

  // --- source lines of the selected function -------------------------------------------------
  function renderSource() {
    var box = $("source"), id = state.selected;
    box.replaceChildren();
    if (id < 0) { box.textContent = "Select a function to see its lines."; return; }
    // Per file:line of the function's frames: what ends there (flat) and passes (cum).
    var lines = new Map(), column = columns().now, values = D.columns[column][state.type];
    for (var leaf = 0; leaf < D.leaves.length; leaf++) {
      if (values[leaf] === 0 || !tree.keepLeaf[leaf]) continue;
      var seen = new Set(), first = true;
      for (var n = D.leaves[leaf]; n >= 0; n = D.parents[n]) {
        var f = D.nodeFrames[n];
        if (D.frames[f * 4] === id && !seen.has(f)) {
          seen.add(f);
          var key = D.frames[f * 4 + 1] + ":" + D.frames[f * 4 + 2];
          var l = lines.get(key) || {file: D.frames[f * 4 + 1], line: D.frames[f * 4 + 2], flat: 0, cum: 0};
          if (first) l.flat += values[leaf];
          l.cum += values[leaf];
          lines.set(key, l);
        }
        first = false;
      }
    }
    box.appendChild(el("h2", {}, "Lines of " + S[id]));
    var byFile = new Map();
    lines.forEach(function (l) {
      if (!byFile.has(l.file)) byFile.set(l.file, new Map());
      byFile.get(l.file).set(l.line, l);
    });
    Array.from(byFile.keys()).forEach(function (file) {
      var hot = byFile.get(file), excerpt = sourceFiles.get(file);
      box.appendChild(el("h3", {class: "file"}, S[file] || "(no file known)"));
      if (!excerpt) {
        var why = sourceMissing.get(file);
        if (file && why) {
          box.appendChild(el("div", {class: "missing"}, "Not found where the report was written; looked at: " +
            why.looked.join(", ") + (why.full ? " (the report's room for source text was full)" : "")));
        }
      } else {
        box.appendChild(el("div", {class: "missing"}, "read from " + excerpt.path));
      }
      var table = el("table", {class: "source"}), head = el("tr");
      ["flat", "cum", "line", excerpt ? "source" : ""].forEach(function (h) { head.appendChild(el("th", {}, h)); });
      table.appendChild(head);
      function row(line, text) {
        var l = hot.get(line), tr = el("tr", {"data-line": line});
        tr.appendChild(el("td", {}, l ? quantity(l.flat) : ""));
        tr.appendChild(el("td", {}, l ? quantity(l.cum) : ""));
        tr.appendChild(el("td", {}, line ? String(line) : "-"));
        tr.appendChild(el("td", {class: "code"}, text));
        if (l) tr.className = "hot";
        table.appendChild(tr);
      }
      if (excerpt) {
        // The excerpts that hold one of the function's lines, whole.
        excerpt.ranges.forEach(function (range) {
          var first = range[0], texts = range[1], holds = false;
          hot.forEach(function (l, line) { if (line >= first && line < first + texts.length) holds = true; });
          if (!holds) return;
          if (table.rows.length > 1) { var gap = el("tr"); gap.appendChild(el("td", {colspan: 4}, "\u22ee")); table.appendChild(gap); }
          texts.forEach(function (text, i) { row(first + i, text); });
        });
      } else {
        Array.from(hot.keys()).sort(function (a, b) { return a - b; }).forEach(function (line) { row(line, ""); });
      }
      box.appendChild(table);
    });
  }

  // --- tooltips ------------------------------------------------------------------------------
  // The files and lines of a tree node's frames: kept per tree, as a hover asks often.
  var linesCache = {tree: null, lines: new Map()};
  function frameLines(fn) {
    if (linesCache.tree !== tree) linesCache = {tree: tree, lines: new Map()};
    var known = linesCache.lines.get(fn);
    if (!known) { known = findFrameLines(fn); linesCache.lines.set(fn, known); }
    return known;
  }
  function findFrameLines(fn) {
    var found = new Map();
    for (var n = 0; n < nodeCount && found.size < 50; n++) {
      if (tree.fnOf[n] !== fn || nodeName[n] !== tree.name[fn]) continue;
      var f = D.nodeFrames[n], file = S[D.frames[f * 4 + 1]], line = D.frames[f * 4 + 2];
      var flags = D.frames[f * 4 + 3];
      if (file) found.set(file + ":" + line + (flags & FRAME_INLINED ? " (inlined)" : ""), true);
      else if (flags & FRAME_THREAD) found.set("(a thread)", true);
      else if (flags & FRAME_DUMP) found.set("(a dump)", true);
    }
    return Array.from(found.keys());
  }
  function tooltipText(n) {
    var whole = width(0), text = n === 0 ? "all" : S[tree.name[n]];
    if (base) {
      text += "\nnew " + quantity(now.total[n]) + ", base " + quantity(base.total[n]) +
        ", change " + signed(now.total[n] - base.total[n]);
    } else {
      text += "\n" + quantity(now.total[n]) + " (" + percent(now.total[n], whole) + "), self " +
        quantity(now.self[n]);
    }
    if (n > 0) {
      var lines = frameLines(n);
      if (lines.length) text += "\n" + lines.slice(0, 8).join("\n") + (lines.length > 8 ? "\n..." : "");
    }
    return text;
  }

  // --- the page ------------------------------------------------------------------------------
  function renderHeader() {
    var c = columns(), diff = !!base, type = D.types[state.type].name;
    $("side-label").hidden = !diff;
    if (diff) {
      var b = base.total[0], a = now.total[0];
      $("total").textContent = type + ": base " + quantity(b) + ", new " + quantity(a) + " (change " +
        signed(a - b) + ")";
      var legend = $("legend");
      legend.hidden = false;
      legend.replaceChildren(document.createTextNode("Colours: "));
      [["rgb(255,20,20)", "grew (new > base)"], ["rgb(20,235,20)", "shrank (new < base)"],
       ["rgb(220,220,220)", "unchanged"]].forEach(function (s) {
        var sw = el("span", {class: "swatch"});
        sw.style.background = s[0];
        legend.appendChild(sw);
        legend.appendChild(document.createTextNode(s[1]));
      });
      legend.appendChild(document.createTextNode("; widths by the " + state.side + " values"));
    } else {
      $("legend").hidden = true;
      $("total").textContent = type + ": " + quantity(now.total[0]) + " total";
    }
    if (D.kind === "series") {
      $("total").textContent += " \u2014 window: dump " + (state.from + 1) + " to " + (state.to + 1);
    }
    var match = searchMatcher();
    if (match) {
      var part = matchedShare(match), of = width(state.zoom);
      $("matched").textContent = "Matched: " + (of ? (100 * part / of).toFixed(1) : "0.0") + "% (" +
        quantity(part) + ")";
    } else {
      $("matched").textContent = "";
    }
    $("selected").textContent = state.selected >= 0 ? "Selected: " + S[state.selected] : "";
    var chips = $("refinements");
    chips.replaceChildren();
    (D.applied || []).forEach(function (text) {
      chips.appendChild(el("span", {class: "applied", title: "applied when the report was written"}, text));
    });
    state.refinements.forEach(function (r, i) {
      var chip = el("span", {class: "chip"}, r.kind + "=" + r.pattern);
      var undo = el("button", {type: "button", "data-undo": i, title: "undo"}, "\u2715");
      chip.appendChild(undo);
      chips.appendChild(chip);
    });
  }

  function render() {
    renderHeader();
    document.querySelectorAll("#tabs button").forEach(function (b) {
      b.classList.toggle("active", b.dataset.view === state.view);
    });
    document.querySelectorAll(".view").forEach(function (v) {
      v.classList.toggle("active", v.id === "view-" + state.view);
    });
    if (state.view === "top") renderTop();
    if (state.view === "flame") renderFlame();
    if (state.view === "peek") renderPeek();
    if (state.view === "source") renderSource();
    if (D.kind === "series") renderSeries();
  }

  function refresh(structure) {
    if (structure) { buildTree(); state.zoom = 0; }
    computeValues();
    render();
  }

  // --- a series: totals over time and the window -----------------------------------------------
  function columnTotal(c) {
    var values = D.columns[c][state.type], sum = 0;
    for (var i = 0; i < values.length; i++) if (tree.keepLeaf[i]) sum += values[i];
    return sum;
  }
  function renderSeries() {
    var svg = $("chart"), W = 900, H = 180, pad = 40, count = D.columns.length;
    var totals = [], xs = D.series.seconds, timed = D.series.timed && xs[count - 1] > 0;
    for (var c = 0; c < count; c++) totals.push(columnTotal(c));
    var maxY = Math.max.apply(null, totals.concat([1])), maxX = timed ? xs[count - 1] : Math.max(count - 1, 1);
    function X(i) { return pad + (W - 2 * pad) * (timed ? xs[i] : i) / maxX; }
    function Y(v) { return H - 20 - (H - 40) * v / maxY; }
    var ns = "http://www.w3.org/2000/svg", parts = [];
    svg.replaceChildren();
    var band = document.createElementNS(ns, "rect");
    band.setAttribute("x", X(state.from) - 3); band.setAttribute("width", X(state.to) - X(state.from) + 6);
    band.setAttribute("y", 10); band.setAttribute("height", H - 30); band.setAttribute("fill", "#dde8ff");
    band.setAttribute("id", "window");
    svg.appendChild(band);
    for (var i = 0; i < count; i++) parts.push((i ? "L" : "M") + X(i).toFixed(1) + "," + Y(totals[i]).toFixed(1));
    var path = document.createElementNS(ns, "path");
    path.setAttribute("d", parts.join(" ")); path.setAttribute("fill", "none");
    path.setAttribute("stroke", "#236"); path.setAttribute("stroke-width", "2");
    svg.appendChild(path);
    for (i = 0; i < count; i++) {
      var dot = document.createElementNS(ns, "circle");
      dot.setAttribute("cx", X(i)); dot.setAttribute("cy", Y(totals[i])); dot.setAttribute("r", 4);
      dot.setAttribute("fill", i >= state.from && i <= state.to ? "#236" : "#aab");
      dot.setAttribute("data-dump", i);
      var title = document.createElementNS(ns, "title");
      title.textContent = D.sources[i] + ": " + quantity(totals[i]) + (timed ? " at " + xs[i].toFixed(2) + " s" : "");
      dot.appendChild(title);
      svg.appendChild(dot);
    }
    var label = document.createElementNS(ns, "text");
    label.setAttribute("x", pad); label.setAttribute("y", 14); label.setAttribute("font-size", "12");
    label.textContent = D.types[state.type].name + " over " + (timed ? xs[count - 1].toFixed(1) + " s" : count + " dumps") +
      ", peak " + quantity(maxY) + "; click a dump or move the window";
    svg.appendChild(label);
    $("from-label").textContent = D.sources[state.from];
    $("to-label").textContent = D.sources[state.to];
  }
  function setupSeries() {
    $("series").hidden = false;
    var last = D.columns.length - 1;
    ["from", "to"].forEach(function (id) {
      var input = $(id);
      input.max = last;
      input.value = state[id];
      input.addEventListener("input", function () {
        state[id] = Number(input.value);
        if (state.from > state.to) {
          if (id === "from") state.to = state.from; else state.from = state.to;
          $("from").value = state.from; $("to").value = state.to;
        }
        refresh(false);
      });
    });
    $("chart").addEventListener("click", function (event) {
      var dump = event.target.getAttribute && event.target.getAttribute("data-dump");
      if (dump === null || dump === undefined) return;
      state.from = state.to = Number(dump);
      $("from").value = state.from; $("to").value = state.to;
      refresh(false);
    });
    var bytes = isBytes(), rate = D.series.timed ? "/s" : "/dump";
    var head = el("tr");
    ["rank", "growth" + rate, "R\u00b2", "first", "last", "allocated at"].forEach(function (h) {
      head.appendChild(el("th", {class: h === "allocated at" ? "name" : ""}, h));
    });
    $("suspects").tHead.appendChild(head);
    var body = $("suspects").tBodies[0];
    D.series.suspects.forEach(function (s, i) {
      var tr = el("tr", {"data-suspect": i, title: s.frames.map(function (f) { return S[f]; }).join(" \u203a ")});
      var cells = [String(i + 1), (s.growth > 0 ? "+" : "") + (bytes ? quantity(Math.round(s.growth)) : s.growth.toFixed(1)),
                   fixed2(s.r2), quantity(s.values[0]), quantity(s.values[s.values.length - 1])];
      cells.forEach(function (t) { tr.appendChild(el("td", {}, t)); });
      tr.appendChild(el("td", {class: "name"}, s.site));
      body.appendChild(tr);
    });
    body.addEventListener("click", function (event) {
      var tr = event.target.closest("tr");
      if (!tr) return;
      var s = D.series.suspects[Number(tr.dataset.suspect)];
      // The suspect's stack, followed down the tree by function names.
      var node = 0;
      for (var i = 0; i < s.frames.length; i++) {
        var name = S[s.frames[i]], next = -1;
        tree.children[node].forEach(function (c) { if (S[tree.name[c]] === name) next = c; });
        if (next < 0) break;
        node = next;
      }
      state.zoom = node;
      state.selected = node > 0 ? tree.name[node] : state.selected;
      state.view = "flame";
      render();
    });
  }

  // --- events --------------------------------------------------------------------------------
  function select(id) { state.selected = id; render(); }

  function setup() {
    $("title").textContent = D.title;
    function files(list) {
      return list.length > 3 ? list[0] + ", ... (" + (list.length - 2) + " more), " + list[list.length - 1]
                             : list.join(", ");
    }
    $("sources").textContent = (D.kind === "diff" ? "new: " + files(D.sources) + " \u2014 base: " +
      files(D.baseSources) : files(D.sources)) + (D.notes.length ? " \u2014 " + D.notes.join(" ") : "");
    D.types.forEach(function (t, i) {
      var option = el("option", {value: i}, t.name);
      $("type").appendChild(option);
    });
    $("type").value = state.type;
    $("type").addEventListener("change", function () { state.type = Number(this.value); refresh(false); });
    $("side").addEventListener("change", function () { state.side = this.value; render(); });
    $("orientation").addEventListener("change", function () {
      state.orientation = this.value;
      render();
    });
    $("search").addEventListener("input", function () { state.search = this.value; render(); });
    $("refine-add").addEventListener("click", function () {
      var pattern = $("refine-pattern").value, kind = $("refine-kind").value;
      if (!pattern) return;
      if (!compile(pattern, false)) {
        $("refine-pattern").setCustomValidity("not a valid regular expression");
        $("refine-pattern").reportValidity();
        return;
      }
      $("refine-pattern").setCustomValidity("");
      state.refinements.push({kind: kind, pattern: pattern});
      $("refine-pattern").value = "";
      refresh(true);
    });
    $("refine-pattern").addEventListener("keydown", function (e) { if (e.key === "Enter") $("refine-add").click(); });
    $("refinements").addEventListener("click", function (event) {
      var undo = event.target.getAttribute("data-undo");
      if (undo === null) return;
      state.refinements.splice(Number(undo), 1);
      refresh(true);
    });
    $("tabs").addEventListener("click", function (event) {
      var view = event.target.dataset && event.target.dataset.view;
      if (view) { state.view = view; render(); }
    });
    $("top").addEventListener("click", function (event) {
      var th = event.target.closest("th");
      if (th) {
        var key = th.dataset.sort;
        if (key === "flatp" || key === "sump") key = "flat";
        if (key === "cump") key = "cum";
        state.sortDown = state.sort === key ? !state.sortDown : key !== "name";
        state.sort = key;
        render();
        return;
      }
      var tr = event.target.closest("tr[data-function]");
      if (tr) select(Number(tr.dataset.function));
    });
    $("flame").addEventListener("click", function (event) {
      var n = event.target.dataset.node;
      if (n === undefined) return;
      state.zoom = Number(n);
      state.selected = state.zoom > 0 ? tree.name[state.zoom] : state.selected;
      render();
    });
    $("crumbs").addEventListener("click", function (event) {
      var n = event.target.dataset.node;
      if (n !== undefined) { state.zoom = Number(n); render(); }
    });
    ["callers", "callees"].forEach(function (id) {
      $(id).addEventListener("click", function (event) {
        var n = event.target.dataset.node;
        if (n === undefined) return;
        var trees = peekTrees(state.selected), t = trees[id];
        select(t.names[Number(n)]);
      });
    });
    var tip = $("tooltip");
    $("flame").addEventListener("mousemove", function (event) {
      var n = event.target.dataset.node;
      if (n === undefined) { tip.hidden = true; return; }
      tip.textContent = tooltipText(Number(n));
      tip.hidden = false;
      tip.style.left = Math.min(event.clientX + 12, window.innerWidth - 660) + "px";
      tip.style.top = event.clientY + 14 + "px";
    });
    $("flame").addEventListener("mouseleave", function () { tip.hidden = true; });
    window.addEventListener("resize", function () { render(); });
    document.addEventListener("keydown", function (event) {
      if ((event.ctrlKey || event.metaKey) && event.key === "f") {
        event.preventDefault();
        $("search").focus();
      } else if (event.key === "Escape") {
        state.search = ""; $("search").value = ""; state.zoom = 0; render();
      }
    });
    if (D.kind === "series") setupSeries();
    setupThreads();
    if (D.logTable) setupLifetimes();
  }

  // An allocation log: its table per site (--text's) with each site linked to the other
  // views, and its lifetime chart (--lifetimes').
  function setupLifetimes() {
    document.querySelector('#tabs button[data-view="lifetimes"]').hidden = false;
    var box = $("log-table"), lines = D.logTable.replace(/\n$/, "").split("\n");
    lines.forEach(function (line, i) {
      var row = el("pre", {class: i > 1 ? "logrow" : "loghead"}, line);
      if (i > 1) {
        // Eleven figures, then the site (which may hold spaces).
        var site = line.trim().split(/\s+/).slice(11).join(" ");
        row.dataset.site = site;
        row.title = "select " + site;
      }
      box.appendChild(row);
    });
    box.addEventListener("click", function (event) {
      var site = event.target.dataset && event.target.dataset.site;
      var id = site === undefined ? -1 : S.indexOf(site);
      if (id >= 0) { state.selected = id; state.view = "flame"; render(); }
    });
    $("lifetime-chart").src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(D.lifetimeSvg);
  }

  // With --threads every stack starts with its thread's frame: a selector keeps one thread.
  function setupThreads() {
    var threads = [];
    for (var n = 0; n < nodeCount; n++) {
      var f = D.nodeFrames[n];
      if (D.parents[n] < 0 && (D.frames[f * 4 + 3] & FRAME_THREAD) && threads.indexOf(f) < 0) threads.push(f);
    }
    if (!threads.length) return;
    var select = $("thread");
    threads.sort(function (a, b) { return S[D.frames[a * 4]] < S[D.frames[b * 4]] ? -1 : 1; });
    threads.forEach(function (f) { select.appendChild(el("option", {value: f}, S[D.frames[f * 4]])); });
    $("thread-label").hidden = false;
    select.addEventListener("change", function () { state.thread = Number(this.value); refresh(true); });
  }

  setup();
  state.view = location.hash === "#flame" ? "flame" : "top";
  refresh(true);
  // For scripted checks and the console: the state and the numbers shown.
  window.heapkitReport = {
    state: state, data: D,
    top: function () { return topRows(); },
    total: function () { return now.total[0]; },
    baseTotal: function () { return base ? base.total[0] : null; },
    name: function (id) { return S[id]; },
    quantity: quantity,
    render: render
  };
  window.heapkitReadyAt = performance.now();
}).catch(function (error) {
  document.getElementById("title").textContent = "This report could not be read: " + error;
  throw error;
});
