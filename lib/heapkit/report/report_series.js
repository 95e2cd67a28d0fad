// SPDX-License-Identifier: MIT
// A series (growth): the totals over time with the window the views compare, moved by
// its sliders or a click on a dump, and the suspects, the stacks that grow most.
"use strict";

function columnTotal(c) {
  const values = D.columns[c][state.type];
  const keep = tree.leaves().keep;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    if (keep[i]) {
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

function svgText(svg, x, y, text, attrs) {
  const t = svgElement("text", Object.assign({x: x, y: y, "font-size": "11", fill: "#333"}, attrs || {}));
  t.textContent = text;
  svg.appendChild(t);
}

// The chart's axes: the type's amounts up the left (0, half the peak, the peak) with
// light lines across, the dumps' times (or numbers) along the bottom, each axis named.
function drawAxes(svg, box, maxX, maxY, timed) {
  const {left, right, top, bottom} = box;
  svg.appendChild(svgElement("path", {d: "M" + left + "," + top + " V" + bottom + " H" + right,
                                      fill: "none", stroke: "#666", class: "axis"}));
  [0, 0.5, 1].forEach((f) => {
    const y = bottom - (bottom - top) * f;
    svg.appendChild(svgElement("path", {d: "M" + left + "," + y + " H" + right, stroke: "#dde", fill: "none"}));
    svgText(svg, left - 4, y + 4, quantity(Math.round(maxY * f)), {"text-anchor": "end", class: "tick y"});
  });
  [0, 0.5, 1].forEach((f) => {
    const x = left + (right - left) * f;
    svg.appendChild(svgElement("path", {d: "M" + x + "," + bottom + " v4", stroke: "#666"}));
    const value = maxX * f;
    svgText(svg, x, bottom + 15, timed ? value.toFixed(1) + " s" : "dump " + (Math.round(value) + 1),
            {"text-anchor": f === 0 ? "start" : f === 1 ? "end" : "middle", class: "tick x"});
  });
  svgText(svg, (left + right) / 2, bottom + 29, timed ? "seconds since the first dump" : "dumps, in order",
          {"text-anchor": "middle", class: "axis-label"});
  svgText(svg, 12, (top + bottom) / 2, D.types[state.type].name,
          {"text-anchor": "middle", transform: "rotate(-90 12 " + (top + bottom) / 2 + ")", class: "axis-label"});
}

function renderSeries() {
  const svg = $("chart");
  const W = 900;
  const H = 210;
  const box = {left: 78, right: W - 20, top: 24, bottom: H - 38};
  const count = D.columns.length;
  const xs = D.series.seconds;
  const timed = D.series.timed && xs[count - 1] > 0;
  const totals = [];
  for (let c = 0; c < count; c++) {
    totals.push(columnTotal(c));
  }
  const maxY = Math.max.apply(null, totals.concat([1]));
  const maxX = timed ? xs[count - 1] : Math.max(count - 1, 1);
  const X = (i) => box.left + (box.right - box.left) * (timed ? xs[i] : i) / maxX;
  const Y = (v) => box.bottom - (box.bottom - box.top) * v / maxY;
  svg.setAttribute("height", H);
  svg.replaceChildren();
  svg.appendChild(svgElement("rect", {
    x: X(state.from) - 3, width: X(state.to) - X(state.from) + 6, y: box.top - 4,
    height: box.bottom - box.top + 4, fill: "#dde8ff", id: "window"
  }));
  drawAxes(svg, box, maxX, maxY, timed);
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
  svgText(svg, box.left, 14, D.types[state.type].name + " over " +
    (timed ? xs[count - 1].toFixed(1) + " s" : count + " dumps") + ", peak " + quantity(maxY) +
    "; click a dump or move the window", {"font-size": "12", class: "title"});
  $("from-label").textContent = D.sources[state.from];
  $("to-label").textContent = D.sources[state.to];
  renderSuspects();
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

// The suspects' table, with each one's figures within the window (report_trend.js), by
// --growth's sample type; a row shows its stack in the flame graph, followed down the
// tree by function names.
function renderSuspects() {
  const bytes = D.types.find((t) => t.name === D.series.ranked) ?
    D.types.find((t) => t.name === D.series.ranked).unit === "bytes" : isBytes();
  const figures = D.series.suspects.map((s) => windowGrowth(s.values, state.from, state.to));
  const rate = figures.length && figures[0].timed ? "/s" : "/dump";
  const head = el("tr");
  ["rank", "growth" + rate, "R\u00b2", "first", "last", "allocated at"].forEach((h) => {
    head.appendChild(el("th", {class: h === "allocated at" ? "name" : ""}, h));
  });
  $("suspects").tHead.replaceChildren(head);
  const body = document.createElement("tbody");
  D.series.suspects.forEach((s, i) => {
    const f = figures[i];
    const tr = el("tr", {"data-suspect": i, title: s.frames.map((id) => nameOf(id)).join(" \u203a ")});
    const cells = [String(i + 1), (f.growth > 0 ? "+" : "") + (bytes ? amountText(Math.round(f.growth), true) : f.growth.toFixed(1)),
                   fixed2(f.r2), amountText(f.first, bytes), amountText(f.last, bytes)];
    cells.forEach((t) => tr.appendChild(el("td", {}, t)));
    tr.appendChild(el("td", {class: "name"}, s.site));
    body.appendChild(tr);
  });
  $("suspects").replaceChild(body, $("suspects").tBodies[0]);
}

function setupSuspects() {
  const body = $("suspects");
  body.addEventListener("click", (event) => {
    const tr = event.target.closest("tbody tr");
    if (!tr) {
      return;
    }
    const s = D.series.suspects[Number(tr.dataset.suspect)];
    let node = 0;
    for (const frame of s.frames) {
      const name = nameOf(frame);
      let next = -1;
      tree.children[node].forEach((c) => {
        if (nameOf(tree.name[c]) === name) {
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
