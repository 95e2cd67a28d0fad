// SPDX-License-Identifier: MIT
// The Graph view: pprof's call graph (report_graph.js) laid out in the page
// (report_graph_layout.js) as an SVG, callers above callees. A box reads as pprof's: the
// short name in lines, then flat (flat%) and "of" cum (cum%), its text the larger the
// larger its flat; an edge is the thicker the more passes over it, dotted where it
// goes over dropped functions, its value on hover. A click on a box selects its function.
"use strict";

const GRAPH_FONT = "system-ui, sans-serif";

// The graph and its layout follow the tree and the values only: kept while they stay (a
// selection or a search draws it again as it is).
let graphCache = {tree: null, values: null, graph: null, drawing: null};
function currentGraph() {
  const values = base && state.side === "base" ? base : now; // the side widths follow
  if (graphCache.tree !== tree || graphCache.values !== values) {
    const graph = trimmedGraph(values);
    graphCache = {tree: tree, values: values, graph: graph, drawing: graphDrawing(graph)};
  }
  return graphCache;
}

// pprof's label: the short name (as pprof labels a C++ function it demangled itself: no
// parameters, no template arguments, Class::method) a scope a line, flat (flat%), "of"
// cum (cum%). Split at "::" only: an unnamed "libstdc++.so.6!0x..." stays whole.
function nodeLines(n, whole) {
  const lines = nameForms(nameOf(n.id)).short.split("::");
  const flat = n.flat !== 0 ? quantity(n.flat) + " (" + percent(n.flat, whole) + ")" : "0";
  if (n.cum === n.flat) {
    lines.push(flat);
  } else if (n.flat !== 0) {
    lines.push(flat, "of " + quantity(n.cum) + " (" + percent(n.cum, whole) + ")");
  } else {
    lines.push(flat + " of " + quantity(n.cum) + " (" + percent(n.cum, whole) + ")");
  }
  return lines;
}

// pprof's font size, from a legible 10 px (pprof's 8) up by the square root of the
// node's share of the largest flat.
function fontSize(flat, maxFlat) {
  return 10 + (maxFlat > 0 && flat !== 0 ? Math.ceil(14 * Math.sqrt(Math.abs(flat) / maxFlat)) : 0);
}

let measureContext = null;
function textWidth(text, size) {
  measureContext = measureContext || document.createElement("canvas").getContext("2d");
  measureContext.font = size + "px " + GRAPH_FONT;
  return measureContext.measureText(text).width;
}

// The boxes, their places and the edges' paths.
function graphDrawing(g) {
  const index = new Map(g.nodes.map((n, i) => [n.id, i]));
  const maxFlat = g.nodes.reduce((most, n) => Math.max(most, Math.abs(n.flat)), 0);
  const boxes = g.nodes.map((n) => {
    const size = fontSize(n.flat, maxFlat);
    const lines = nodeLines(n, g.total);
    const w = lines.reduce((most, line) => Math.max(most, textWidth(line, size)), 0) + 12;
    return {lines: lines, size: size, w: Math.ceil(w), h: Math.ceil(lines.length * size * 1.2 + 8)};
  });
  const edges = [];
  g.nodes.forEach((n) => n.outs.forEach((e) => edges.push(e)));
  const placed = layOut(boxes, edges.map((e) => [index.get(e.from.id), index.get(e.to.id)]));
  return {boxes: boxes, edges: edges, placed: placed, index: index};
}

// An edge's path from its caller's box to its callee's, through its points, leaving and
// entering vertically; and its arrowhead at the callee.
function edgePath(points, from, to) {
  const pts = points.map((p) => ({x: p.x, y: p.y}));
  const first = pts[0];
  const last = pts[pts.length - 1];
  first.y += (pts[1].y > first.y ? 1 : -1) * from.h / 2;
  const down = last.y > pts[pts.length - 2].y;
  last.y -= (down ? 1 : -1) * (to.h / 2 + 6);
  let d = "M" + first.x + "," + first.y;
  for (let i = 1; i < pts.length; i++) {
    const mid = (pts[i - 1].y + pts[i].y) / 2;
    d += " C" + pts[i - 1].x + "," + mid + " " + pts[i].x + "," + mid + " " + pts[i].x + "," + pts[i].y;
  }
  const tip = last.y + (down ? 6 : -6);
  const arrow = (last.x - 4) + "," + last.y + " " + (last.x + 4) + "," + last.y + " " + last.x + "," + tip;
  return {d: d, arrow: arrow};
}

// Per function its cum in the base and the new values, for a change's colours.
function changeOfFunctions() {
  const change = new Map();
  const f = topFigures(); // report_top.js
  for (let r = 0; r < f.count; r++) {
    change.set(f.ids[r], topValue(f, "dcum", r));
  }
  return change;
}

function drawEdges(svg, drawing, total) {
  drawing.edges.forEach((e, i) => {
    const from = drawing.index.get(e.from.id);
    const to = drawing.index.get(e.to.id);
    if (drawing.placed.edges[i].length < 2) {
      return; // a function calling itself directly has no edge (buildGraph)
    }
    const {d, arrow} = edgePath(drawing.placed.edges[i], drawing.boxes[from], drawing.boxes[to]);
    const share = total ? Math.min(1, Math.abs(e.value) / total) : 0;
    const grey = Math.round(190 - 150 * Math.sqrt(share));
    const colour = "rgb(" + grey + "," + grey + "," + grey + ")";
    // pprof's pen width: 1 + 5 times the edge's share of the total, at most 6.
    const pen = 1 + Math.min(Math.trunc(Math.abs(e.value) * 5 / (total || 1)), 5);
    const g = svgElement("g", {"data-edge": i, class: "gedge"});
    g.appendChild(svgElement("path", {d: d, fill: "none", stroke: colour, "stroke-width": pen,
                                      "stroke-dasharray": e.residual ? "2,3" : "none"}));
    g.appendChild(svgElement("polygon", {points: arrow, fill: colour}));
    g.appendChild(svgElement("path", {d: d, fill: "none", stroke: "transparent", "stroke-width": 10}));
    svg.appendChild(g);
  });
}

function drawNodes(svg, g, drawing) {
  const match = searchMatcher();
  const change = base ? changeOfFunctions() : null;
  const maxChange = change ? g.nodes.reduce((most, n) => Math.max(most, Math.abs(change.get(n.id) || 0)), 0) : 0;
  g.nodes.forEach((n, i) => {
    const box = drawing.boxes[i];
    const at = drawing.placed.nodes[i];
    const group = svgElement("g", {"data-function": n.id, class: "gnode"});
    const selected = n.id === state.selected;
    const matched = match && match(n.id);
    group.appendChild(svgElement("rect", {
      x: at.x - box.w / 2, y: at.y - box.h / 2, width: box.w, height: box.h, rx: 3,
      fill: change ? changeColour(change.get(n.id) || 0, maxChange) : moduleColour(n.id),
      stroke: selected ? "#000" : matched ? "rgb(230,0,230)" : "#778",
      "stroke-width": selected || matched ? 3 : 1
    }));
    box.lines.forEach((line, k) => {
      const y = at.y - box.h / 2 + 4 + (k + 0.85) * box.size * 1.2;
      svgText(group, at.x, y, line, {"text-anchor": "middle", "font-size": box.size, "font-family": GRAPH_FONT});
    });
    svg.appendChild(group);
  });
}

function renderGraph() {
  const {graph, drawing} = currentGraph();
  $("graph-note").textContent = graphLegend(graph).join("; ");
  const box = $("graph");
  if (!graph.nodes.length) {
    box.replaceChildren(el("p", {}, "Nothing to draw: no function has a value here."));
    return;
  }
  const svg = svgElement("svg", {width: Math.ceil(drawing.placed.width) + 8,
                                 height: Math.ceil(drawing.placed.height) + 8, role: "img", "aria-label": "call graph"});
  const content = svgElement("g", {transform: "translate(4,4)"});
  drawEdges(content, drawing, graph.total);
  drawNodes(content, graph, drawing);
  svg.appendChild(content);
  box.replaceChildren(svg);
}

function graphTooltipText(target) {
  const {graph, drawing} = currentGraph();
  const node = target.closest("[data-function]");
  if (node) {
    const n = graph.nodes[drawing.index.get(Number(node.dataset.function))];
    const lines = functionLines(n.id);
    return nameOf(n.id) + "\nflat " + quantity(n.flat) + " (" + percent(n.flat, graph.total) + "), cum " +
      quantity(n.cum) + " (" + percent(n.cum, graph.total) + ")" + (lines.length ? "\n" + lines[0] : "");
  }
  const edge = target.closest("[data-edge]");
  if (edge) {
    const e = drawing.edges[Number(edge.dataset.edge)];
    return nameOf(e.from.id) + (e.residual ? " \u2026 " : " \u2192 ") + nameOf(e.to.id) + "\n" + quantity(e.value) + " (" +
      percent(e.value, graph.total) + ")" + (e.residual ? "\nthrough functions not shown" : "");
  }
  return null;
}

// A click on a box selects its function; boxes and edges tell their figures on hover.
function setupGraph() {
  const box = $("graph");
  box.addEventListener("click", (event) => {
    const node = event.target.closest("[data-function]");
    if (node) {
      select(Number(node.dataset.function));
    }
  });
  const tip = $("tooltip");
  box.addEventListener("mousemove", (event) => {
    const text = graphTooltipText(event.target);
    tip.hidden = text === null;
    if (text !== null) {
      tip.textContent = text;
      tip.style.left = Math.min(event.clientX + 12, window.innerWidth - 660) + "px";
      tip.style.top = event.clientY + 14 + "px";
    }
  });
  box.addEventListener("mouseleave", () => { tip.hidden = true; });
}

// For scripted checks: the graph's nodes and edges as figures.
function graphFigures() {
  const {graph} = currentGraph();
  const edges = [];
  graph.nodes.forEach((n) => n.outs.forEach((e) => {
    edges.push({from: nameOf(e.from.id), to: nameOf(e.to.id), value: e.value, residual: e.residual});
  }));
  return {nodes: graph.nodes.map((n) => ({name: nameOf(n.id), flat: n.flat, cum: n.cum})), edges: edges,
          legend: graphLegend(graph)};
}
