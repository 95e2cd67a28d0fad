// SPDX-License-Identifier: MIT
// Top: one row per function, flat and cum (and in a change, both sides and the change),
// as --text's table; sorted by any column, searched, and a row selects its function.
"use strict";

// Top's rows depend on the tree and its values only: kept while they stay (a selection,
// a search or a new sort order reuses them).
let topCache = {tree: null, now: null, base: null, rows: null};
function topRows() {
  if (topCache.tree === tree && topCache.now === now && topCache.base === base) {
    return topCache.rows.slice();
  }
  topCache = {tree: tree, now: now, base: base, rows: computeTopRows()};
  return topCache.rows.slice();
}
// Per function: its flat and cum (and the base's), summed over the tree's nodes in typed
// arrays by string id; a row for each function with a value.
function computeTopRows() {
  const flat = new Float64Array(S.length);
  const cum = new Float64Array(S.length);
  const bflat = new Float64Array(base ? S.length : 0);
  const bcum = new Float64Array(base ? S.length : 0);
  const seen = new Uint8Array(S.length);
  const order = [];
  for (let n = 1; n < tree.count; n++) {
    if (now.total[n] === 0 && (!base || base.total[n] === 0)) {
      continue;
    }
    const id = tree.name[n];
    if (!seen[id]) {
      seen[id] = 1;
      order.push(id);
    }
    flat[id] += now.self[n];
    if (tree.outer[n]) {
      cum[id] += now.total[n];
    }
    if (base) {
      bflat[id] += base.self[n];
      if (tree.outer[n]) {
        bcum[id] += base.total[n];
      }
    }
  }
  return order.map((id) => {
    const r = {id: id, flat: flat[id], cum: cum[id], bflat: base ? bflat[id] : 0, bcum: base ? bcum[id] : 0};
    r.dflat = r.flat - r.bflat;
    r.dcum = r.cum - r.bcum;
    return r;
  });
}
// The rows in the chosen order, sorted again only when the rows or the order change.
function sortedTopRows() {
  let key = state.sort;
  if (!base && key === "dflat") {
    key = "flat";
  }
  const order = key + (state.sortDown ? " down" : " up");
  if (topCache.sorted && topCache.order === order && topCache.tree === tree &&
      topCache.now === now && topCache.base === base) {
    return topCache.sorted;
  }
  const rows = inOrder(topRows(), key); // (topRows may make topCache anew)
  topCache.sorted = rows;
  topCache.order = order;
  return rows;
}

const SHOWN_ROWS = 1000;
// `rows` in the chosen order by `key`, the first SHOWN_ROWS (all Top draws) exactly: past
// a few thousand rows (a million unnamed addresses), only the rows whose key reaches the
// SHOWN_ROWS-th's are sorted, first, and the others follow as they were.
function inOrder(rows, key) {
  const compare = (a, b) => {
    let x = key === "name" ? 0 : Math.abs(b[key]) - Math.abs(a[key]);
    if (key === "name") {
      x = S[a.id] < S[b.id] ? -1 : S[a.id] > S[b.id] ? 1 : 0;
    }
    if (!state.sortDown) {
      x = -x;
    }
    return x || Math.abs(b.cum) - Math.abs(a.cum) || (S[a.id] < S[b.id] ? -1 : 1);
  };
  if (key === "name" || rows.length <= 4 * SHOWN_ROWS) {
    rows.sort(compare);
    rows.exact = rows.length;
    return rows;
  }
  const sign = state.sortDown ? 1 : -1;
  const keys = new Float64Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    keys[i] = sign * Math.abs(rows[i][key]);
  }
  const least = kthLargest(keys, SHOWN_ROWS);
  const head = [];
  const tail = [];
  for (let i = 0; i < rows.length; i++) {
    (keys[i] >= least ? head : tail).push(rows[i]);
  }
  const sorted = head.sort(compare).concat(tail);
  sorted.exact = head.length; // the rows in order: all that reach the SHOWN_ROWS-th's key
  return sorted;
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
// The rows of `sorted` (inOrder's) that `match`, in inOrder's order: as they stand where
// SHOWN_ROWS of them are among the rows already in order (every row past those is below
// them), else sorted again.
function matchingInOrder(sorted, match, key) {
  const rows = [];
  let inOrderRows = 0;
  for (let i = 0; i < sorted.length; i++) {
    if (match(sorted[i].id)) {
      rows.push(sorted[i]);
      inOrderRows += i < sorted.exact ? 1 : 0;
    }
  }
  if (inOrderRows >= SHOWN_ROWS || inOrderRows === rows.length) {
    rows.exact = inOrderRows;
    return rows;
  }
  return inOrder(rows, key);
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
// selection only marks its row).
let topShown = {rows: null, search: null};
function renderTop() {
  const diff = !!base;
  let rows = sortedTopRows();
  if (topShown.rows === rows && topShown.search === state.search) {
    for (const tr of $("top").tBodies[0].rows) {
      tr.className = Number(tr.dataset.function) === state.selected ? "sel" : "";
    }
    return;
  }
  topShown = {rows: rows, search: state.search};
  const match = searchMatcher();
  if (match) {
    rows = matchingInOrder(rows, match, state.sort === "dflat" && !base ? "flat" : state.sort);
  }
  const total = now.total[0];
  const baseTotal = base ? base.total[0] : 0;
  $("top").tHead.replaceChildren(topHead(diff));
  const body = document.createElement("tbody");
  let sum = 0;
  const shown = Math.min(rows.length, SHOWN_ROWS);
  for (let i = 0; i < shown; i++) {
    const r = rows[i];
    const tr = el("tr", {"data-function": r.id});
    sum += r.flat;
    const cells = diff
      ? [quantity(r.bflat), quantity(r.flat), signed(r.dflat), quantity(r.bcum), quantity(r.cum), signed(r.dcum)]
      : [quantity(r.flat), percent(r.flat, total), percent(sum, total), quantity(r.cum), percent(r.cum, total)];
    cells.forEach((text, c) => {
      const td = el("td", {}, text);
      if (diff && (c === 2 || c === 5)) {
        const change = c === 2 ? r.dflat : r.dcum;
        td.className = change > 0 ? "grow" : change < 0 ? "shrink" : "";
      }
      tr.appendChild(td);
    });
    tr.appendChild(el("td", {class: "name"}, S[r.id]));
    if (r.id === state.selected) {
      tr.className = "sel";
    }
    body.appendChild(tr);
  }
  $("top").replaceChild(body, $("top").tBodies[0]);
  $("top-note").textContent = rows.length > shown
    ? shown + " of " + rows.length + " functions shown: search to find the others"
    : rows.length + " functions" + (diff ? "; base total " + quantity(baseTotal) : "");
}
