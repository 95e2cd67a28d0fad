// SPDX-License-Identifier: MIT
// A series (growth): the totals over time with the window the views compare, moved by
// its sliders or a click on a dump, and the suspects, the stacks that grow most.
"use strict";

function columnTotal(c) {
  const values = D.columns[c][state.type];
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    if (tree.keepLeaf[i]) {
      sum += values[i];
    }
  }
  return sum;
}

const SVG_NS = "http://www.w3.org/2000/svg";
function svgElement(tag, attrs) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const k in attrs) {
    e.setAttribute(k, attrs[k]);
  }
  return e;
}

function renderSeries() {
  const svg = $("chart");
  const W = 900;
  const H = 180;
  const pad = 40;
  const count = D.columns.length;
  const xs = D.series.seconds;
  const timed = D.series.timed && xs[count - 1] > 0;
  const totals = [];
  for (let c = 0; c < count; c++) {
    totals.push(columnTotal(c));
  }
  const maxY = Math.max.apply(null, totals.concat([1]));
  const maxX = timed ? xs[count - 1] : Math.max(count - 1, 1);
  const X = (i) => pad + (W - 2 * pad) * (timed ? xs[i] : i) / maxX;
  const Y = (v) => H - 20 - (H - 40) * v / maxY;
  svg.replaceChildren();
  svg.appendChild(svgElement("rect", {
    x: X(state.from) - 3, width: X(state.to) - X(state.from) + 6, y: 10, height: H - 30,
    fill: "#dde8ff", id: "window"
  }));
  const parts = totals.map((total, i) => (i ? "L" : "M") + X(i).toFixed(1) + "," + Y(total).toFixed(1));
  svg.appendChild(svgElement("path", {
    d: parts.join(" "), fill: "none", stroke: "#236", "stroke-width": "2"
  }));
  for (let i = 0; i < count; i++) {
    const dot = svgElement("circle", {
      cx: X(i), cy: Y(totals[i]), r: 4, fill: i >= state.from && i <= state.to ? "#236" : "#aab",
      "data-dump": i
    });
    const title = document.createElementNS(SVG_NS, "title");
    title.textContent = D.sources[i] + ": " + quantity(totals[i]) + (timed ? " at " + xs[i].toFixed(2) + " s" : "");
    dot.appendChild(title);
    svg.appendChild(dot);
  }
  const label = svgElement("text", {x: pad, y: 14, "font-size": "12"});
  label.textContent = D.types[state.type].name + " over " + (timed ? xs[count - 1].toFixed(1) + " s" : count + " dumps") +
    ", peak " + quantity(maxY) + "; click a dump or move the window";
  svg.appendChild(label);
  $("from-label").textContent = D.sources[state.from];
  $("to-label").textContent = D.sources[state.to];
}

// The window's sliders and the chart's dumps.
function setupWindow() {
  const last = D.columns.length - 1;
  ["from", "to"].forEach((id) => {
    const input = $(id);
    input.max = last;
    input.value = state[id];
    input.addEventListener("input", () => {
      state[id] = Number(input.value);
      if (state.from > state.to) {
        if (id === "from") {
          state.to = state.from;
        } else {
          state.from = state.to;
        }
        $("from").value = state.from;
        $("to").value = state.to;
      }
      refresh(false);
    });
  });
  $("chart").addEventListener("click", (event) => {
    const dump = event.target.getAttribute && event.target.getAttribute("data-dump");
    if (dump === null || dump === undefined) {
      return;
    }
    state.from = state.to = Number(dump);
    $("from").value = state.from;
    $("to").value = state.to;
    refresh(false);
  });
}

// The suspects' table; a row shows its stack in the flame graph, followed down the tree
// by function names.
function setupSuspects() {
  const bytes = isBytes();
  const rate = D.series.timed ? "/s" : "/dump";
  const head = el("tr");
  ["rank", "growth" + rate, "R\u00b2", "first", "last", "allocated at"].forEach((h) => {
    head.appendChild(el("th", {class: h === "allocated at" ? "name" : ""}, h));
  });
  $("suspects").tHead.appendChild(head);
  const body = $("suspects").tBodies[0];
  D.series.suspects.forEach((s, i) => {
    const tr = el("tr", {"data-suspect": i, title: s.frames.map((f) => S[f]).join(" \u203a ")});
    const cells = [String(i + 1), (s.growth > 0 ? "+" : "") + (bytes ? quantity(Math.round(s.growth)) : s.growth.toFixed(1)),
                   fixed2(s.r2), quantity(s.values[0]), quantity(s.values[s.values.length - 1])];
    cells.forEach((t) => tr.appendChild(el("td", {}, t)));
    tr.appendChild(el("td", {class: "name"}, s.site));
    body.appendChild(tr);
  });
  body.addEventListener("click", (event) => {
    const tr = event.target.closest("tr");
    if (!tr) {
      return;
    }
    const s = D.series.suspects[Number(tr.dataset.suspect)];
    let node = 0;
    for (const frame of s.frames) {
      const name = S[frame];
      let next = -1;
      tree.children[node].forEach((c) => {
        if (S[tree.name[c]] === name) {
          next = c;
        }
      });
      if (next < 0) {
        break;
      }
      node = next;
    }
    state.zoom = node;
    state.selected = node > 0 ? tree.name[node] : state.selected;
    state.view = "flame";
    render();
  });
}

function setupSeries() {
  $("series").hidden = false;
  setupWindow();
  setupSuspects();
}
