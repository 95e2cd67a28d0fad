// SPDX-License-Identifier: MIT
// The page: its header (totals, matched share, refinements), the views drawn on
// each change, the events, and the start.
"use strict";

function renderRefinements() {
  const chips = $("refinements");
  chips.replaceChildren();
  (D.applied || []).forEach((text) => {
    chips.appendChild(el("span", {class: "applied", title: "applied when the report was written"}, text));
  });
  state.refinements.forEach((r, i) => {
    const chip = el("span", {class: "chip"}, r.kind + "=" + r.pattern);
    chip.appendChild(el("button", {type: "button", "data-undo": i, title: "undo"}, "\u2715"));
    chips.appendChild(chip);
  });
}

function renderHeader() {
  const diff = !!base;
  const type = D.types[state.type].name;
  $("side-label").hidden = !diff;
  if (diff) {
    const b = base.total[0];
    const a = now.total[0];
    $("total").textContent = type + ": base " + quantity(b) + ", new " + quantity(a) + " (change " +
      signed(a - b) + ")";
  } else {
    $("total").textContent = type + ": " + quantity(now.total[0]) + " total";
  }
  renderLegend();
  if (D.kind === "series") {
    $("total").textContent += " \u2014 window: dump " + (state.from + 1) + " to " + (state.to + 1);
  }
  const match = searchMatcher();
  if (match) {
    const part = matchedShare(match);
    $("matched").textContent = matchedLine(part, width(state.zoom), quantity(part));
  } else {
    $("matched").textContent = "";
  }
  $("selected").textContent = state.selected >= 0 ? "Selected: " + nameOf(state.selected) : "";
  renderRefinements();
}

let renderCount = 0; // for scripted checks: a debounced search draws once
function render() {
  renderCount++;
  renderHeader();
  document.querySelectorAll("#tabs button").forEach((b) => {
    b.classList.toggle("active", b.dataset.view === state.view);
  });
  document.querySelectorAll(".view").forEach((v) => {
    v.classList.toggle("active", v.id === "view-" + state.view);
  });
  const views = {top: renderTop, flame: renderFlame, peek: renderPeek, source: renderSource, graph: renderGraph};
  if (views[state.view]) {
    views[state.view]();
  }
  if (D.kind === "series") {
    renderSeries();
  }
  rememberState();
}

// After a change: of the tree's structure (refinements, thread), or of its values only.
function refresh(structure) {
  withProgress("Refining " + D.leaves.length + " stacks\u2026", structure && nodeCount > SLOW_NODES, () => {
    if (structure) {
      buildTree();
      state.zoom = 0;
    }
    computeValues();
    render();
  });
}

function select(id) {
  state.selected = id;
  render();
}

function files(list) {
  return list.length > 3 ? list[0] + ", ... (" + (list.length - 2) + " more), " + list[list.length - 1]
    : list.join(", ");
}

// A search drawn as it is typed: at once (the keys of one task drawn once) while its
// drawing is quick, and once the keys pause where it is slow: a big report's search takes
// a while, and each key's drawing would wait for the last. Quick (its script done well
// within the ~100 ms between a person's keys) until one is measured, on a page of fewer
// than SLOW_NODES stack prefixes; on a bigger one the names are tested meanwhile
// (searchAhead), and a key is drawn at once only where they all are.
const QUICK_SEARCH_MS = 50;
const SEARCH_PAUSE_MS = 150;
function searchKeys() {
  let cost = nodeCount > SLOW_NODES ? Infinity : 0; // the last search's drawing, ms
  let timer = 0;
  let waiting = null; // the drawing to come: {finish}, under way for settled()
  return () => {
    clearTimeout(timer);
    const tested = searchAhead($("search").value); // report_flame.js
    if (!waiting) {
      waiting = {};
      underWay(new Promise((resolve) => { waiting.finish = resolve; }));
    }
    timer = setTimeout(() => {
      const ending = waiting;
      waiting = null;
      const start = performance.now();
      try {
        state.search = $("search").value;
        render();
      } finally {
        cost = performance.now() - start;
        ending.finish();
      }
    }, cost < QUICK_SEARCH_MS && tested ? 0 : SEARCH_PAUSE_MS);
  };
}

// The header's controls: type, side, orientation, search and refinements.
function setupControls() {
  $("type").replaceChildren(); // (the writer's, drawn ahead)
  D.types.forEach((t, i) => $("type").appendChild(el("option", {value: i}, t.name)));
  $("type").value = state.type;
  $("type").addEventListener("change", function () {
    state.type = Number(this.value);
    refresh(false);
  });
  $("side").addEventListener("change", function () {
    state.side = this.value;
    render();
  });
  $("orientation").addEventListener("change", function () {
    state.orientation = this.value;
    render();
  });
  $("search").addEventListener("input", searchKeys());
  $("refine-add").addEventListener("click", () => {
    const pattern = $("refine-pattern").value;
    const kind = $("refine-kind").value;
    if (!pattern) {
      return;
    }
    if (!compilePattern(pattern, false)) {
      $("refine-pattern").setCustomValidity("not a valid regular expression");
      $("refine-pattern").reportValidity();
      return;
    }
    $("refine-pattern").setCustomValidity("");
    state.refinements.push({kind: kind, pattern: pattern});
    $("refine-pattern").value = "";
    refresh(true);
  });
  $("refine-pattern").addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      $("refine-add").click();
    }
  });
  $("refinements").addEventListener("click", (event) => {
    const undo = event.target.getAttribute("data-undo");
    if (undo !== null) {
      state.refinements.splice(Number(undo), 1);
      refresh(true);
    }
  });
}

// Clicks in the views: tabs, Top's heads and rows, frames, crumbs.
function setupViews() {
  $("tabs").addEventListener("click", (event) => {
    const view = event.target.dataset && event.target.dataset.view;
    if (view) {
      state.view = view;
      render();
    }
  });
  $("top").addEventListener("click", (event) => {
    const th = event.target.closest("th");
    if (th) {
      let key = th.dataset.sort;
      if (key === "flatp" || key === "sump") {
        key = "flat";
      }
      if (key === "cump") {
        key = "cum";
      }
      state.sortDown = state.sort === key ? !state.sortDown : key !== "name";
      state.sort = key;
      render();
      return;
    }
    const tr = event.target.closest("tr[data-function]");
    if (tr) {
      select(Number(tr.dataset.function));
    }
  });
  function zoomTo(n) {
    state.zoom = n;
    state.selected = state.zoom > 0 ? tree.name[state.zoom] : state.selected;
    render();
  }
  $("flame").addEventListener("click", (event) => {
    const {node, merged} = event.target.dataset;
    if (merged !== undefined) {
      openMerged(Number(merged));
    } else if (node !== undefined) {
      zoomTo(Number(node));
    }
  });
  $("flame-merged").addEventListener("click", (event) => {
    const link = event.target.closest("a[data-node]");
    if (link) {
      event.preventDefault();
      zoomTo(Number(link.dataset.node));
    }
  });
  $("crumbs").addEventListener("click", (event) => {
    const n = event.target.dataset.node;
    if (n !== undefined) {
      state.zoom = Number(n);
      render();
    }
  });
}

// A tooltip for the frames drawn in `box`: textOf(node) as the pointer moves over one.
function showTooltips(box, textOf) {
  const tip = $("tooltip");
  box.addEventListener("mousemove", (event) => {
    const n = event.target.dataset.node;
    if (n === undefined) {
      tip.hidden = true;
      return;
    }
    tip.textContent = textOf(Number(n));
    tip.hidden = false;
    tip.style.left = Math.min(event.clientX + 12, window.innerWidth - 660) + "px";
    tip.style.top = event.clientY + 14 + "px";
  });
  box.addEventListener("mouseleave", () => { tip.hidden = true; });
}

// The flame graph's tooltip, the window's size, and the keys.
function setupPointerAndKeys() {
  showTooltips($("flame"), tooltipText);
  window.addEventListener("resize", () => render());
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "f") {
      event.preventDefault();
      $("search").focus();
    } else if (event.key === "Escape") {
      state.search = "";
      $("search").value = "";
      state.zoom = 0;
      render();
    }
  });
}

// A page served live: which process, when its heap was captured, and a control that
// captures it again (the page reloaded, its state kept in the address).
function showCapture() {
  const c = D.capture;
  const when = new Date(c.unixMillis).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  $("sources").replaceChildren(el("span", {id: "captured"}, "The live heap of " + c.program + " (pid " +
    c.pid + "), captured " + when + " "));
  const again = el("button", {type: "button", id: "capture-again", title: "take the heap again, keeping the view"},
                   "Capture again");
  again.addEventListener("click", () => location.reload());
  $("sources").appendChild(again);
  if (D.notes.length) {
    $("sources").appendChild(document.createTextNode(" " + D.notes.join(" ")));
  }
}

function setup() {
  $("title").textContent = D.title;
  $("sources").textContent = (D.kind === "diff" ? "new: " + files(D.sources) + " \u2014 base: " +
    files(D.baseSources) : files(D.sources)) + (D.notes.length ? " \u2014 " + D.notes.join(" ") : "");
  if (D.capture) {
    showCapture();
  }
  setupControls();
  setupViews();
  setupPeek();
  setupGraph();
  setupPointerAndKeys();
  if (D.kind === "series") {
    setupSeries();
  }
  setupThreads();
  if (D.logTable) {
    setupLifetimes();
  }
}

// An allocation log: its table per site (--text's) with each site linked to the other
// views, and its lifetime chart (--lifetimes').
function setupLifetimes() {
  document.querySelector('#tabs button[data-view="lifetimes"]').hidden = false;
  const box = $("log-table");
  D.logTable.replace(/\n$/, "").split("\n").forEach((line, i) => {
    const row = el("pre", {class: i > 1 ? "logrow" : "loghead"}, line);
    if (i > 1) {
      // Eleven figures, then the site (which may hold spaces).
      const site = line.trim().split(/\s+/).slice(11).join(" ");
      row.dataset.site = site;
      row.title = "select " + site;
    }
    box.appendChild(row);
  });
  box.addEventListener("click", (event) => {
    const site = event.target.dataset && event.target.dataset.site;
    const id = site === undefined ? -1 : nameId(site);
    if (id >= 0) {
      state.selected = id;
      state.view = "flame";
      render();
    }
  });
  $("lifetime-chart").src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(D.lifetimeSvg);
}

// With --threads every stack starts with its thread's frame: a selector keeps one thread.
function setupThreads() {
  const labels = new Set(framesFlagged(FRAME_THREAD));
  const threads = [];
  for (let n = 0; n < nodeCount && labels.size; n++) {
    const f = D.nodeFrames[n];
    if (D.parents[n] < 0 && labels.has(f) && threads.indexOf(f) < 0) {
      threads.push(f);
    }
  }
  if (!threads.length) {
    return;
  }
  const chooser = $("thread");
  threads.sort((a, b) => (compareNames(frameName(a), frameName(b)) < 0 ? -1 : 1));
  threads.forEach((f) => chooser.appendChild(el("option", {value: f}, nameOf(frameName(f)))));
  $("thread-label").hidden = false;
  chooser.addEventListener("change", function () {
    state.thread = Number(this.value);
    refresh(true);
  });
}

// A row of the writer's Top (report.html) clicked before the data was read: selected now.
function takeEarlyClick() {
  const top = $("top");
  if (top.dataset.pending !== undefined && state.selected < 0) {
    state.selected = Number(top.dataset.pending);
  }
  top.dataset.live = "1";
  top.classList.remove("pending");
}

const bigData = document.getElementById("data").textContent.length > (1 << 20);
window.heapkitReady = withProgress("Reading the report's data\u2026", bigData, heapkitData).then((data) => {
  readData(data);
  setup();
  return withProgress(D.leaves.length + " stacks: building the tree\u2026", nodeCount > SLOW_NODES, () => {
    setupAddress(); // the state a link or a reload names
    takeEarlyClick();
    render();
    $("progress").hidden = true; // (shown from the start, while the data was read)
  });
}).then(() => {
  // For scripted checks and the console: the state and the numbers shown.
  window.heapkitReport = {
    state: state, data: D,
    top: () => topRows(),
    total: () => now.total[0],
    baseTotal: () => (base ? base.total[0] : null),
    name: nameOf,
    nameId: nameId,
    nameForms: nameForms,
    graph: graphFigures,
    pprofShortName: pprofShortName,
    quantity: quantity,
    render: render,
    renders: () => renderCount,
    settled: settled
  };
  window.heapkitReadyAt = performance.now();
}).catch((error) => {
  document.getElementById("title").textContent = "This report could not be read: " + error;
  throw error;
});
