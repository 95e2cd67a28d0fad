// SPDX-License-Identifier: MIT
// The flame graph (its root at the top, or at the bottom), the search that lights frames,
// and the frames' tooltips; drawFlame draws the callers' and callees' trees too.
"use strict";

// The search's test of a string id (emit/js/matcher.js), or null without a search. Kept
// while the search is the same: a drawing asks for it several times (header, view, Top),
// and a million names take a while to test.
let searchMatch = {search: "", test: null, known: null};
let searchNext = searchMatch; // the one being typed (searchAhead), or searchMatch
function searchMatcher() {
  if (!state.search) {
    return null;
  }
  if (searchMatch.search !== state.search) {
    searchMatch = searchNext.search === state.search ? searchNext : searchById(state.search, searchNext);
    clearTimeout(searchAheadTimer); // drawn: its names tested as the views ask, no more ahead
  }
  return searchMatch.test;
}

// Whether a search's text is plain text to a regular expression (no character that means
// more), as a name holds it.
function isPlainText(text) {
  return !/[\\^$.|?*+()[\]{}]/.test(text);
}
// The search `text`'s test of a string id (testById's). Where `before` is plain text that
// `text`, plain too, holds, a name `before` did not match cannot match `text`: its answer is
// taken (a search typed key by key tests only what the keys before matched, and what
// they left untested).
function searchById(text, before) {
  const known = answersFor(nameCount);
  if (before.known && before.test.yes && isPlainText(before.search) && isPlainText(text) &&
      text.includes(before.search)) {
    known.set(before.known);
    before.test.yes.forEach((id) => setAnswer(known, id, 0)); // (to test again)
  }
  return {search: text, test: testById(searchTest(text), known, isPlainText(text) ? text : null),
          known: known};
}

// The names tested against the search being typed, a slice of a few milliseconds between
// other tasks, while the keys come and in their pause (searchKeys): on a page of over
// SLOW_NODES stack prefixes, a million names take longer to test than a person's pause, and
// the search's drawing once they pause then finds its test made. Returns whether `text`'s
// test is made for every name, or quick to make as it is drawn (a smaller page).
let searchAheadTimer = 0;
function searchAhead(text) {
  clearTimeout(searchAheadTimer);
  if (!text || nodeCount <= SLOW_NODES) {
    return true;
  }
  if (searchNext.search !== text) {
    searchNext = text === searchMatch.search ? searchMatch : searchById(text, searchNext);
  }
  const {test, known} = searchNext;
  if (isPlainText(text)) {
    test.askAll(); // a few milliseconds for a million names
    return true;
  }
  let id = firstUnanswered(known);
  function slice() {
    const until = performance.now() + 8;
    for (; id >= 0 && id < nameCount; id++) {
      test.ask(id);
      if ((id & 4095) === 0 && performance.now() > until) {
        searchAheadTimer = setTimeout(slice, 0);
        return;
      }
    }
    id = -1;
  }
  if (id >= 0) {
    searchAheadTimer = setTimeout(slice, 0);
  }
  return id < 0;
}

// The share of the zoomed frame held by matching frames, each stack once (the outermost
// match), as the SVG flame graph reports it (emit/js/flame.js's matchedValue): the zoomed
// subtree's range walked, a match's subtree skipped. Kept while the tree, its values, the
// zoom and the search stay: a change of view or selection draws the header again, and the
// walk of a million-node tree took 20-30 ms of it.
let matchedKept = {tree: null, widths: null, zoom: -1, match: null, sum: 0};
function matchedShare(match) {
  const root = state.zoom;
  const widths = base && state.side === "base" ? base.total : now.total; // as width(n)
  const kept = matchedKept;
  if (kept.tree === tree && kept.widths === widths && kept.zoom === root && kept.match === match) {
    return kept.sum;
  }
  const {name, end} = tree;
  let sum = 0;
  for (let n = root + 1; n < end[root];) {
    if (match(name[n])) {
      sum += widths[n];
      n = end[n];
    } else {
      n++;
    }
  }
  matchedKept = {tree: tree, widths: widths, zoom: root, match: match, sum: sum};
  return sum;
}

const ROW = 17;
function fill(n, view) {
  if (view.names[n] < 0) {
    return "rgb(200,200,215)"; // the root, "all"
  }
  if (view.diff) {
    return changeColour(view.now[n] - view.base[n], view.maxChange);
  }
  return moduleColour(view.names[n]); // report_colours.js
}

// The pixels a label keeps clear of its frame's left edge (.flame div's text-indent) and
// right edge.
const LABEL_INDENT = 3;
// The width of a character of the frames' monospace font, measured once.
let charWidth = 0;
function frameCharWidth(box) {
  if (!charWidth) {
    const context = document.createElement("canvas").getContext("2d");
    const style = window.getComputedStyle(box);
    context.font = style.fontSize + " " + style.fontFamily;
    charWidth = context.measureText("M").width || 7.2;
  }
  return charWidth;
}

// Whether a frame `w` pixels wide is drawn only as part of a "\u2026" block.
function isThin(w) {
  return w > 0 && w < 1;
}

// Text for HTML markup: the characters that would end a text or an attribute escaped.
function escapeHtml(text) {
  return text.replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"})[c]);
}

// Draws `view` (names, children, widths; the root at the top, or at the bottom where
// view.flip says so) into `box`, from `view.root` whose ancestors, given in view.above,
// are drawn full width and dimmed. Every frame is as wide as its value; the children of a
// frame narrower than a pixel are drawn as one "\u2026" block after their siblings where they
// add up to a pixel, and are left out where they do not. Returns {merged, leftOut}: how
// many frames each way. The frames are written as one piece of markup: thousands of
// elements made one call at a time took most of a drawing's script time.
function drawFlame(box, view) {
  const px = box.clientWidth || 1000;
  const charPx = frameCharWidth(box);
  const rootWidth = view.width[view.root];
  const match = view.match;
  // Per frame: its markup up to its top, its row, its markup after (the rows are placed
  // once the depth is known: a flame graph's root is at the bottom).
  const heads = [];
  const rows = [];
  const tails = [];
  const narrow = {merged: 0, leftOut: 0};
  let depth = 0;
  function frame(n, x, w, y, dim) {
    // Fitted to the frame (the first of its name's forms that fits, report_names.js): a
    // label never runs into its neighbour's.
    const name = n === 0 && view.allName ? view.allName : nameOf(view.names[n]);
    const label = frameLabel(n === 0 && view.allName ? -1 : view.names[n], name,
                             (w - 2 * LABEL_INDENT) / charPx);
    let cls = dim ? "dim" : "";
    if (match && n !== 0 && match(view.names[n])) {
      cls += " match";
    }
    if (n !== 0 && view.names[n] === state.selected) {
      cls += " sel";
    }
    heads.push("<div data-node=\"" + n + (cls ? "\" class=\"" + cls : "") + "\" style=\"left:" + x +
               "px;width:" + w + "px;background:" + fill(n, view) + ";top:");
    rows.push(y);
    tails.push("px\">" + escapeHtml(label) + "</div>");
    depth = Math.max(depth, y);
  }
  function merged(parent, count, value, x, w, y) {
    const title = count + " frames narrower than a pixel: " + quantity(value) + " (" +
      percent(value, width(0)) + ")" + (view.openable ? "; a click lists them" : "");
    heads.push("<div class=\"merged\" data-merged=\"" + parent + "\" title=\"" + escapeHtml(title) +
               "\" style=\"left:" + x + "px;width:" + w + "px;top:");
    rows.push(y);
    tails.push("px\">" + (w - 2 * LABEL_INDENT >= charPx ? "\u2026" : "") + "</div>");
    depth = Math.max(depth, y);
  }
  const above = view.above || [];
  above.forEach((n, y) => frame(n, 0, px, y, true));
  if (rootWidth > 0) {
    const scale = px / rootWidth;
    const stack = [[view.root, 0, above.length]];
    while (stack.length) {
      const [n, x, y] = stack.pop();
      frame(n, x, view.width[n] * scale, y, false);
      let cx = x;
      let thin = 0;
      let thinValue = 0;
      const wide = [];
      for (const kid of view.children[n]) {
        if (isThin(view.width[kid] * scale)) {
          thin++;
          thinValue += view.width[kid];
        } else if (view.width[kid] > 0) {
          wide.push(kid);
        }
      }
      // Callees stand on their caller sorted by name, as in the SVG flame graph: those
      // drawn (a frame may call a million narrower than a pixel, merged after them).
      wide.sort((a, b) => (compareNames(view.names[a], view.names[b]) < 0 ? -1 : 1));
      for (const kid of wide) {
        stack.push([kid, cx, y + 1]);
        cx += view.width[kid] * scale;
      }
      if (thin && thinValue * scale >= 1) {
        merged(n, thin, thinValue, cx, thinValue * scale, y + 1);
        narrow.merged += thin;
      } else {
        narrow.leftOut += thin;
      }
    }
  }
  let markup = "";
  for (let i = 0; i < heads.length; i++) {
    markup += heads[i] + (view.flip ? depth - rows[i] : rows[i]) * ROW + tails[i];
  }
  box.innerHTML = markup;
  box.style.height = (depth + 1) * ROW + "px";
  return narrow;
}

// What the flame graph leaves out, said under it.
function narrowNote(narrow) {
  const parts = [];
  if (narrow.merged) {
    parts.push(narrow.merged + " frames narrower than a pixel drawn merged, as \u2026 blocks");
  }
  if (narrow.leftOut) {
    parts.push(narrow.leftOut + " left out (with what they call): together narrower than a pixel");
  }
  return parts.join("; ");
}

function mainView() {
  const diff = !!base;
  let maxChange = 0;
  if (diff) {
    for (let n = 1; n < tree.count; n++) {
      maxChange = Math.max(maxChange, Math.abs(now.total[n] - base.total[n]));
    }
  }
  const widths = base && state.side === "base" ? base.total : now.total;
  return {names: tree.name, children: tree.children, width: widths, root: state.zoom,
          above: ancestorsOf((n) => tree.parent[n], state.zoom), diff: diff, now: now.total,
          base: base ? base.total : null, maxChange: maxChange, match: searchMatcher(),
          allName: "all", openable: true};
}

// What the main flame graph was drawn from: drawn again only where one of them changed;
// a search or a selection changes only the frames' classes. Weak: a tree let go (a
// refinement undone while another view shows) is not kept for this.
let flameDrawn = {tree: new WeakRef({}), values: new WeakRef({}), key: ""};
function renderFlame() {
  const view = mainView();
  view.flip = state.orientation === "flame";
  const box = $("flame");
  const values = base && state.side === "base" ? base : now;
  const key = [state.zoom, state.orientation, box.clientWidth].join(" ");
  if (flameDrawn.tree.deref() === tree && flameDrawn.values.deref() === values &&
      flameDrawn.key === key) {
    markFrames(box, view);
  } else {
    $("flame-note").textContent = narrowNote(drawFlame(box, view));
    flameDrawn = {tree: new WeakRef(tree), values: new WeakRef(values), key: key};
  }
  $("flame-merged").hidden = true;
  if (view.flip && state.view === "flame") {
    // However deep the graph, the page shows its root: scrolled to the graph's bottom.
    const bottom = $("flame").getBoundingClientRect().bottom;
    if (bottom > window.innerHeight) {
      window.scrollBy(0, bottom - window.innerHeight);
    }
  }
  const crumbs = $("crumbs");
  crumbs.replaceChildren();
  view.above.concat([state.zoom]).forEach((n, i) => {
    if (i > 0) {
      crumbs.appendChild(document.createTextNode(" \u203a "));
    }
    crumbs.appendChild(el("a", {"data-node": n}, n === 0 ? "all" : nameOf(tree.name[n])));
  });
}

// The frames drawn in `box` lit where they match the search and outlined where they are
// the selected function, as drawFlame draws them.
function markFrames(box, view) {
  for (const d of box.querySelectorAll("div[data-node]")) {
    const n = Number(d.dataset.node);
    const id = view.names[n];
    d.classList.toggle("match", !!view.match && n !== 0 && view.match(id));
    d.classList.toggle("sel", n !== 0 && id === state.selected);
  }
}

// A "\u2026" block opened: the frames it stands for (the callees of `n` narrower than a
// pixel in the graph as drawn) listed under the graph by value, the largest first, each
// name a link that zooms to its frame. A block hides names that a person may be looking
// for; the list reaches them in one click, where zooming step by step may take many.
const MERGED_LISTED = 100;
function openMerged(n) {
  const view = mainView();
  const scale = ($("flame").clientWidth || 1000) / view.width[view.root];
  // A block may stand for a million frames (unnamed addresses), most of one value: the
  // largest kept in order as they are met, not all of them sorted.
  const before = (a, b) => view.width[b] - view.width[a] ||
                           (compareNames(view.names[a], view.names[b]) < 0 ? -1 : 1);
  const shown = [];
  let thin = 0;
  for (const kid of view.children[n]) {
    if (!isThin(view.width[kid] * scale)) {
      continue;
    }
    thin++;
    if (shown.length === MERGED_LISTED && before(shown[MERGED_LISTED - 1], kid) < 0) {
      continue;
    }
    let at = shown.length;
    while (at > 0 && before(kid, shown[at - 1]) < 0) {
      at--;
    }
    shown.splice(at, 0, kid);
    shown.length = Math.min(shown.length, MERGED_LISTED);
  }
  const list = $("flame-merged");
  const items = el("ol");
  for (const kid of shown) {
    const item = el("li");
    item.append(el("a", {"data-node": kid, href: "#"}, nameOf(view.names[kid])),
                " " + quantity(view.width[kid]) + " (" + percent(view.width[kid], width(0)) + ")");
    items.appendChild(item);
  }
  list.replaceChildren(
    el("p", {}, thin + " frames called by " + (n === 0 ? "all" : nameOf(view.names[n])) +
       ", each narrower than a pixel, drawn as one \u2026 block" +
       (thin > shown.length ? "; the " + shown.length + " largest:" : ":")),
    items);
  list.hidden = false;
  list.scrollIntoView({block: "nearest"});
}

// The files and lines of a tree node's frames: kept per tree, as a hover asks often.
let linesCache = {tree: null, lines: new Map()};
function frameLines(fn) {
  if (linesCache.tree !== tree) {
    linesCache = {tree: tree, lines: new Map()};
  }
  let known = linesCache.lines.get(fn);
  if (!known) {
    known = findFrameLines(fn);
    linesCache.lines.set(fn, known);
  }
  return known;
}
function findFrameLines(fn) {
  const found = new Map();
  for (let n = 0; n < nodeCount && found.size < 50; n++) {
    if (rawNodeIn(tree, n) !== fn || nodeName(n) !== tree.name[fn]) {
      continue;
    }
    const f = D.nodeFrames[n];
    const file = nameOf(frameFile(f));
    const line = frameLine(f);
    const flags = frameFlags(f);
    if (file) {
      found.set(file + ":" + line + (flags & FRAME_INLINED ? " (inlined)" : ""), true);
    } else if (flags & FRAME_THREAD) {
      found.set("(a thread)", true);
    } else if (flags & FRAME_DUMP) {
      found.set("(a dump)", true);
    }
  }
  return Array.from(found.keys());
}
function tooltipText(n) {
  const whole = width(0);
  let text = n === 0 ? "all" : nameOf(tree.name[n]);
  if (base) {
    text += "\nnew " + quantity(now.total[n]) + ", base " + quantity(base.total[n]) +
      ", change " + signed(now.total[n] - base.total[n]);
  } else {
    text += "\n" + quantity(now.total[n]) + " (" + percent(now.total[n], whole) + "), self " +
      quantity(now.self[n]);
  }
  if (n > 0) {
    const lines = frameLines(n);
    if (lines.length) {
      text += "\n" + lines.slice(0, 8).join("\n") + (lines.length > 8 ? "\n..." : "");
    }
  }
  return text;
}
