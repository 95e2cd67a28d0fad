// SPDX-License-Identifier: MIT
// Top: one row per function, flat and cum (and in a change, both sides and the change),
// as --text's table; sorted by any column, searched, and a row selects its function.
"use strict";

// Top's figures depend on the tree and its values only: kept while they stay (a selection,
// a search or a new sort order reuses them), with the last order made of them.
let topCache = {tree: null, now: null, base: null, figures: null, order: null, orderKey: ""};
function topFigures() {
  if (topCache.tree !== tree || topCache.now !== now || topCache.base !== base) {
    topCache = {tree: tree, now: now, base: base, figures: computeTopFigures(), order: null, orderKey: ""};
  }
  return topCache.figures;
}
// Per function with a value: its string id, flat and cum (and the base's), summed over the
// tree's nodes, as typed arrays indexed by row (a million functions: no object each); rows
// in the order their functions are first met in the tree. Two walks: the rows numbered,
// then the figures summed into arrays of their exact size.
function computeTopFigures() {
  const rowOf = new Int32Array(nameCount); // by string id: its row + 1, 0 for none
  let count = 0;
  for (let n = 1; n < tree.count; n++) {
    const id = tree.name[n];
    if (rowOf[id] === 0 && (now.total[n] !== 0 || (base && base.total[n] !== 0))) {
      rowOf[id] = ++count;
    }
  }
  // Sums of the values' own sums, in arrays of their type (valuesOf's): a row's flat and
  // cum are at most the root's total (cum adds outermost nodes only).
  const ids = new Int32Array(count);
  const flat = new now.self.constructor(count);
  const cum = new now.self.constructor(count);
  const bflat = base ? new base.self.constructor(count) : null;
  const bcum = base ? new base.self.constructor(count) : null;
  for (let n = 1; n < tree.count; n++) {
    const r = rowOf[tree.name[n]] - 1;
    if (r < 0) {
      continue;
    }
    ids[r] = tree.name[n];
    flat[r] += now.self[n];
    if (tree.outer[n]) {
      cum[r] += now.total[n];
    }
    if (base) {
      bflat[r] += base.self[n];
      if (tree.outer[n]) {
        bcum[r] += base.total[n];
      }
    }
  }
  return {count: count, ids: ids, flat: flat, cum: cum, bflat: bflat, bcum: bcum};
}
// The figures' column `key` ("flat", "cum", "bflat", "bcum", "dflat", "dcum"), by row:
// a change's made on demand; one the figures lack (a profile's base, an unknown key) is 0.
function topColumn(figures, key) {
  const f = figures;
  switch (key) {
  case "flat":
  case "cum":
    return f[key];
  case "bflat":
  case "bcum":
    return f[key] || new Float64Array(f.count);
  case "dflat":
  case "dcum": {
    const [a, b] = key === "dflat" ? [f.flat, f.bflat] : [f.cum, f.bcum];
    if (!b) {
      return a;
    }
    const column = new Float64Array(f.count);
    for (let r = 0; r < f.count; r++) {
      column[r] = a[r] - b[r];
    }
    return column;
  }
  default:
    return new Float64Array(f.count);
  }
}
// Row `r`'s figure in column `key` (as topColumn's, for one row).
function topValue(figures, key, r) {
  const f = figures;
  switch (key) {
  case "flat": return f.flat[r];
  case "cum": return f.cum[r];
  case "bflat": return f.bflat ? f.bflat[r] : 0;
  case "bcum": return f.bcum ? f.bcum[r] : 0;
  case "dflat": return f.flat[r] - (f.bflat ? f.bflat[r] : 0);
  case "dcum": return f.cum[r] - (f.bcum ? f.bcum[r] : 0);
  default: return 0;
  }
}
// The rows as objects, for scripted checks and the console (the page draws from the
// typed arrays).
function topRows() {
  const f = topFigures();
  const rows = [];
  for (let r = 0; r < f.count; r++) {
    rows.push({id: f.ids[r], flat: f.flat[r], cum: f.cum[r], bflat: topValue(f, "bflat", r),
               bcum: topValue(f, "bcum", r), dflat: topValue(f, "dflat", r), dcum: topValue(f, "dcum", r)});
  }
  return rows;
}
// The column Top is sorted by: a change's column stands for flat in a profile.
function topSortKey() {
  return !base && state.sort === "dflat" ? "flat" : state.sort;
}
// The chosen order's key: its column and way.
function topOrderKey() {
  return topSortKey() + (state.sortDown ? " down" : " up");
}
// The rows in the chosen order ({rows: row numbers, exact, count}: inOrder's), sorted again only
// when the figures or the order change.
function sortedTopRows() {
  const figures = topFigures(); // (may make topCache anew)
  if (madeTopOrder() === null) {
    const rows = new Int32Array(figures.count);
    for (let r = 0; r < rows.length; r++) {
      rows[r] = r;
    }
    topCache.order = inOrder(figures, rows, topSortKey());
    topCache.orderKey = topOrderKey();
  }
  return topCache.order;
}
// sortedTopRows' order where it is made for the figures as they are, else null.
function madeTopOrder() {
  return topCache.order !== null && topCache.orderKey === topOrderKey() ? topCache.order : null;
}

const SHOWN_ROWS = 1000;
// `rows` (row numbers of `figures`) in the chosen order by `key`, as {rows, exact, count}: the
// first SHOWN_ROWS (all Top draws) exactly. Past a few thousand rows (a million unnamed
// addresses), only the rows whose key reaches the SHOWN_ROWS-th's are looked at, first,
// the SHOWN_ROWS first of them chosen and sorted (tens of thousands may tie with the
// SHOWN_ROWS-th, as many functions hold one allocation of the same size: sorting them all
// by cum and name took most of Top's drawing), and the others follow as they were; `exact`
// counts the rows in order, `heads` those that reach the SHOWN_ROWS-th's key (every row
// after them is below every row before).
function inOrder(figures, rows, key) {
  const column = key === "name" ? null : topColumn(figures, key);
  const compare = rowOrder(figures, column);
  if (!column || rows.length <= 4 * SHOWN_ROWS) {
    rows.sort(compare);
    return {rows: rows, exact: rows.length, heads: rows.length, count: rows.length};
  }
  const sign = state.sortDown ? 1 : -1;
  const keys = new Float64Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    keys[i] = sign * Math.abs(column[rows[i]]);
  }
  const least = kthLargest(keys, SHOWN_ROWS);
  let heads = 0;
  for (let i = 0; i < rows.length; i++) {
    heads += keys[i] >= least ? 1 : 0;
  }
  const sorted = new Int32Array(rows.length);
  let head = 0;
  let tail = heads;
  for (let i = 0; i < rows.length; i++) {
    sorted[keys[i] >= least ? head++ : tail++] = rows[i];
  }
  const exact = Math.min(heads, SHOWN_ROWS);
  firstInOrder(sorted.subarray(0, heads), exact, compare);
  return {rows: sorted, exact: exact, heads: heads, count: rows.length};
}
// The order of Top's rows: by `column` (its magnitude; null: by name), the chosen way, then
// by cum, the largest first, then by name.
function rowOrder(figures, column) {
  const ids = figures.ids;
  const cum = figures.cum;
  const down = state.sortDown;
  const byName = (a, b) => compareNames(ids[a], ids[b]);
  return (a, b) => {
    let x = column ? Math.abs(column[b]) - Math.abs(column[a]) : byName(a, b);
    if (!down) {
      x = -x;
    }
    return x || Math.abs(cum[b]) - Math.abs(cum[a]) || (byName(a, b) < 0 ? -1 : 1);
  };
}
// `rows` with its `k` first by `compare` at its start, sorted (the rest after them, in no
// order): the k first kept in a heap whose top is the last of them, each row compared with
// it once, then sorted; the rows that tie with the last are compared by name, a few
// thousand times rather than for a sort of all of them.
function firstInOrder(rows, k, compare) {
  if (k === 0) {
    return;
  }
  const heap = rows.subarray(0, k);
  const down = (at) => {
    for (;;) {
      let child = 2 * at + 1;
      if (child >= k) {
        return;
      }
      if (child + 1 < k && compare(heap[child + 1], heap[child]) > 0) {
        child++;
      }
      if (compare(heap[child], heap[at]) <= 0) {
        return;
      }
      const r = heap[at];
      heap[at] = heap[child];
      heap[child] = r;
      at = child;
    }
  };
  for (let at = (k >> 1) - 1; at >= 0; at--) {
    down(at);
  }
  for (let i = k; i < rows.length; i++) {
    if (compare(rows[i], heap[0]) < 0) {
      const r = rows[i];
      rows[i] = heap[0];
      heap[0] = r;
      down(0);
    }
  }
  heap.sort(compare);
}
// The k-th largest of `keys` (as keys sorted ascending [length - k]): the k largest seen
// kept in a min-heap, a million keys looked at once each rather than sorted.
function kthLargest(keys, k) {
  const heap = keys.slice(0, k).sort(); // ascending: a min-heap
  for (let i = k; i < keys.length; i++) {
    const key = keys[i];
    if (key <= heap[0]) {
      continue;
    }
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= k) {
        break;
      }
      if (child + 1 < k && heap[child + 1] < heap[child]) {
        child++;
      }
      if (heap[child] >= key) {
        break;
      }
      heap[at] = heap[child];
      at = child;
    }
    heap[at] = key;
  }
  return heap[0];
}
// The rows whose function `match`es, in the chosen order (inOrder's {rows, exact, heads,
// count}). Where the order of all rows is made (`sorted`, else null) and SHOWN_ROWS of the
// matching ones are among its heads, those are in order as they stand and the others'
// first chosen (every row past the heads is below them); else the matching rows alone are
// put in order (on a million functions, ordering them all first took as long again).
function matchingInOrder(figures, sorted, match, key) {
  const ids = figures.ids;
  const all = new Int32Array(figures.count);
  let count = 0;
  for (let r = 0; r < figures.count; r++) {
    if (match(ids[r])) {
      all[count++] = r;
    }
  }
  if (sorted) {
    const heads = [];
    let inOrderRows = 0;
    for (let i = 0; i < sorted.heads; i++) {
      const r = sorted.rows[i];
      if (match(ids[r])) {
        heads.push(r);
        inOrderRows += i < sorted.exact ? 1 : 0;
      }
    }
    if (heads.length >= SHOWN_ROWS || heads.length === count) {
      const rows = Int32Array.from(heads);
      const exact = Math.min(rows.length, SHOWN_ROWS);
      if (exact > inOrderRows) {
        const column = key === "name" ? null : topColumn(figures, key);
        firstInOrder(rows.subarray(inOrderRows), exact - inOrderRows, rowOrder(figures, column));
      }
      return {rows: rows, exact: exact, heads: rows.length, count: count};
    }
  }
  return inOrder(figures, all.slice(0, count), key);
}
function topHead(diff) {
  const heads = diff
    ? [["bflat", "base flat"], ["flat", "new flat"], ["dflat", "flat change"], ["bcum", "base cum"],
       ["cum", "new cum"], ["dcum", "cum change"], ["name", "function"]]
    : [["flat", "flat"], ["flatp", "flat%"], ["sump", "sum%"], ["cum", "cum"], ["cump", "cum%"],
       ["name", "function"]];
  const head = el("tr");
  heads.forEach((h) => {
    head.appendChild(el("th", {"data-sort": h[0], class: h[0] === "name" ? "name" : ""},
                        h[1] + (state.sort === h[0] ? (state.sortDown ? " \u25bc" : " \u25b2") : "")));
  });
  return head;
}
// What Top's table shows: drawn again only when its rows, order or search change (a
// selection only marks its row). Only the rows drawn are made into elements.
let topShown = {figures: null, orderKey: "", search: null};
// On a page of over SLOW_NODES stack prefixes, Top's rows are drawn a few screens at a time,
// as the reader scrolls near them: drawing the thousand rows at once (their style, layout
// and raster) took most of a redrawing of Top on a million stacks (about 150 ms of the
// main thread and as long again rasterizing), for a view that shows some forty.
const ROWS_AHEAD = 120;
let topRowsAhead = null; // the IntersectionObserver that draws the next rows
function renderTop() {
  const diff = !!base;
  const figures = topFigures();
  const orderKey = topOrderKey();
  if (topShown.figures === figures && topShown.orderKey === orderKey && topShown.search === state.search) {
    for (const tr of $("top").tBodies[0].rows) {
      tr.className = Number(tr.dataset.function) === state.selected ? "sel" : "";
    }
    return;
  }
  topShown = {figures: figures, orderKey: orderKey, search: state.search};
  const match = searchMatcher(); // report_flame.js
  const order = match ? matchingInOrder(figures, madeTopOrder(), match, topSortKey()) : sortedTopRows();
  const total = now.total[0];
  const baseTotal = base ? base.total[0] : 0;
  $("top").tHead.replaceChildren(topHead(diff));
  const body = document.createElement("tbody");
  const shown = Math.min(order.count, SHOWN_ROWS);
  const rows = topRowMaker(figures, order, diff, total);
  const drawn = nodeCount > SLOW_NODES ? Math.min(shown, ROWS_AHEAD) : shown;
  for (let i = 0; i < drawn; i++) {
    body.appendChild(rows(i));
  }
  $("top").replaceChild(body, $("top").tBodies[0]);
  drawRowsAhead(body, drawn, shown, rows);
  $("top-note").textContent = order.count > shown
    ? shown + " of " + order.count + " functions shown: search to find the others"
    : order.count + " functions" + (diff ? "; base total " + quantity(baseTotal) : "");
}
// Top's `i`-th row of `order` as an element: its cells (sum% counted from the rows before
// it, the row's elements made in order), its function's name, marked when selected.
function topRowMaker(figures, order, diff, total) {
  let sum = 0;
  return (i) => {
    const r = order.rows[i];
    const id = figures.ids[r];
    const flat = figures.flat[r];
    const cum = figures.cum[r];
    const tr = el("tr", {"data-function": id});
    sum += flat;
    const cells = diff
      ? [quantity(figures.bflat[r]), quantity(flat), signed(topValue(figures, "dflat", r)),
         quantity(figures.bcum[r]), quantity(cum), signed(topValue(figures, "dcum", r))]
      : [quantity(flat), percent(flat, total), percent(sum, total), quantity(cum), percent(cum, total)];
    cells.forEach((text, c) => {
      const td = el("td", {}, text);
      if (diff && (c === 2 || c === 5)) {
        const change = topValue(figures, c === 2 ? "dflat" : "dcum", r);
        td.className = change > 0 ? "grow" : change < 0 ? "shrink" : "";
      }
      tr.appendChild(td);
    });
    tr.appendChild(el("td", {class: "name"}, nameOf(id)));
    if (id === state.selected) {
      tr.className = "sel";
    }
    return tr;
  };
}
// Rows `drawn` to `shown` of `body` drawn ROWS_AHEAD at a time as the last one drawn comes
// within a screen of the view (in order: each row's sum% follows the one before).
function drawRowsAhead(body, drawn, shown, rows) {
  if (topRowsAhead) {
    topRowsAhead.disconnect();
    topRowsAhead = null;
  }
  if (drawn >= shown) {
    return;
  }
  topRowsAhead = new IntersectionObserver((entries, observer) => {
    if (!entries.some((e) => e.isIntersecting)) {
      return;
    }
    observer.disconnect();
    const more = Math.min(shown, drawn + ROWS_AHEAD);
    const rowsMore = document.createDocumentFragment();
    for (; drawn < more; drawn++) {
      rowsMore.appendChild(rows(drawn));
    }
    body.appendChild(rowsMore);
    if (drawn < shown) {
      observer.observe(body.lastElementChild);
    }
  }, {rootMargin: "100% 0px"});
  topRowsAhead.observe(body.lastElementChild);
}
