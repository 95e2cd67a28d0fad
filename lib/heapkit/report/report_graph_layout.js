// SPDX-License-Identifier: MIT
// A layered layout of the call graph, callers above callees (Sugiyama's steps: cycles
// broken, layers by longest path, long edges through dummy points, crossings reduced by
// barycentres, each layer spread out around its neighbours' centres).
//
// Why our own and not Debian's dagre (node-dagre-layout): the graph has at most 80 nodes
// (pprof's nodecount), where these steps are a page of code and run in milliseconds;
// dagre's one-file build (dist/dagre.min.js, lodash and graphlib inside) would add 85 kB
// to every report, the ones never opened on this view too, and a build dependency in
// debian/control, tests/install-packages.sh and CI, with a second build (without it) to
// keep working and tested.
"use strict";

const LAYER_GAP = 56; // px between a layer's lowest box and the next layer
const NODE_GAP = 24; // px between boxes in a layer
const DUMMY_WIDTH = 8;
const ORDER_SWEEPS = 12;
const PLACE_SWEEPS = 8;

// Layers by longest path from the callers, edges closing a cycle (recursion through
// other functions) turned round first. `boxes`: per node {w, h}; `edges`: [from, to] by
// index. Returns per node its layer and per edge whether it was turned round.
function layers(count, edges) {
  const outs = Array.from({length: count}, () => []);
  edges.forEach(([a, b], i) => outs[a].push([b, i]));
  const reversed = new Uint8Array(edges.length);
  const mark = new Uint8Array(count); // 0 new, 1 on the path, 2 done
  for (let start = 0; start < count; start++) {
    if (mark[start]) {
      continue;
    }
    const walk = [[start, 0]];
    mark[start] = 1;
    while (walk.length) {
      const top = walk[walk.length - 1];
      if (top[1] === outs[top[0]].length) {
        mark[top[0]] = 2;
        walk.pop();
        continue;
      }
      const [next, edge] = outs[top[0]][top[1]++];
      if (mark[next] === 1) {
        reversed[edge] = 1;
      } else if (mark[next] === 0) {
        mark[next] = 1;
        walk.push([next, 0]);
      }
    }
  }
  const layer = new Int32Array(count);
  const ins = Array.from({length: count}, () => []);
  edges.forEach(([a, b], i) => {
    if (a !== b) {
      ins[reversed[i] ? a : b].push(reversed[i] ? b : a);
    }
  });
  const done = new Uint8Array(count);
  const depth = (v) => {
    const walk = [v];
    while (walk.length) {
      const u = walk[walk.length - 1];
      const pending = ins[u].filter((w) => !done[w]);
      if (pending.length) {
        walk.push(...pending);
        continue;
      }
      walk.pop();
      if (!done[u]) {
        layer[u] = ins[u].reduce((most, w) => Math.max(most, layer[w] + 1), 0);
        done[u] = 1;
      }
    }
  };
  for (let v = 0; v < count; v++) {
    depth(v);
  }
  return {layer: layer, reversed: reversed};
}

// Crossings between two neighbouring layers' edges (few enough to count pairwise).
function crossings(rows, position, downs) {
  let crossed = 0;
  for (let r = 0; r + 1 < rows.length; r++) {
    const pairs = [];
    rows[r].forEach((v) => downs[v].forEach((w) => pairs.push([position[v], position[w]])));
    for (let i = 0; i < pairs.length; i++) {
      for (let j = i + 1; j < pairs.length; j++) {
        if ((pairs[i][0] - pairs[j][0]) * (pairs[i][1] - pairs[j][1]) < 0) {
          crossed++;
        }
      }
    }
  }
  return crossed;
}

// The order within each layer: sweeps down and up, each vertex at the mean position of
// its neighbours in the layer before; the order with fewest crossings kept.
function orderLayers(rows, ups, downs, vertexCount) {
  const position = new Float64Array(vertexCount);
  const number = () => rows.forEach((row) => row.forEach((v, i) => { position[v] = i; }));
  number();
  let best = rows.map((row) => row.slice());
  let fewest = crossings(rows, position, downs);
  for (let sweep = 0; sweep < ORDER_SWEEPS && fewest > 0; sweep++) {
    const down = sweep % 2 === 0;
    const order = down ? rows.map((_, r) => r).slice(1) : rows.map((_, r) => r).reverse().slice(1);
    for (const r of order) {
      const centre = new Map(rows[r].map((v) => {
        const near = down ? ups[v] : downs[v];
        return [v, near.length ? near.reduce((s, w) => s + position[w], 0) / near.length : position[v]];
      }));
      rows[r].sort((a, b) => centre.get(a) - centre.get(b) || position[a] - position[b]);
      rows[r].forEach((v, i) => { position[v] = i; });
    }
    const crossed = crossings(rows, position, downs);
    if (crossed < fewest) {
      fewest = crossed;
      best = rows.map((row) => row.slice());
    }
  }
  return best;
}

// A layer's boxes moved towards `wanted` centres, in their order and NODE_GAP apart: the
// mean of the placement pushed rightwards from the left and the one pushed leftwards from
// the right (both keep the gaps, and so does their mean).
function spread(row, wanted, widths) {
  const n = row.length;
  const right = new Float64Array(n);
  const left = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const least = i ? right[i - 1] + (widths[row[i - 1]] + widths[row[i]]) / 2 + NODE_GAP : -Infinity;
    right[i] = Math.max(wanted[i], least);
  }
  for (let i = n - 1; i >= 0; i--) {
    const most = i < n - 1 ? left[i + 1] - (widths[row[i + 1]] + widths[row[i]]) / 2 - NODE_GAP : Infinity;
    left[i] = Math.min(wanted[i], most);
  }
  return row.map((_, i) => (right[i] + left[i]) / 2);
}

// Lays out `boxes` ({w, h} per node) joined by `edges` ([from, to] per edge): per node
// its centre {x, y}, per edge the points it passes through, and the drawing's size.
function layOut(boxes, edges) {
  const {layer, reversed} = layers(boxes.length, edges);
  const widths = boxes.map((b) => b.w);
  const rowOf = Array.from(layer);
  const ups = boxes.map(() => []);
  const downs = boxes.map(() => []);
  const chains = edges.map(([a, b], i) => {
    if (a === b) {
      return [a];
    }
    const [top, bottom] = reversed[i] ? [b, a] : [a, b];
    const chain = [top];
    for (let r = rowOf[top] + 1; r < rowOf[bottom]; r++) {
      chain.push(widths.length);
      widths.push(DUMMY_WIDTH);
      rowOf.push(r);
      ups.push([]);
      downs.push([]);
    }
    chain.push(bottom);
    for (let k = 0; k + 1 < chain.length; k++) {
      downs[chain[k]].push(chain[k + 1]);
      ups[chain[k + 1]].push(chain[k]);
    }
    return reversed[i] ? chain.reverse() : chain;
  });
  const rowCount = rowOf.reduce((most, r) => Math.max(most, r + 1), 0);
  let rows = Array.from({length: rowCount}, () => []);
  rowOf.forEach((r, v) => rows[r].push(v));
  rows = orderLayers(rows, ups, downs, widths.length);
  const x = new Float64Array(widths.length);
  rows.forEach((row) => {
    let at = 0;
    row.forEach((v) => { x[v] = at + widths[v] / 2; at += widths[v] + NODE_GAP; });
  });
  for (let sweep = 0; sweep < PLACE_SWEEPS; sweep++) {
    const down = sweep % 2 === 0;
    const order = down ? rows.map((_, r) => r) : rows.map((_, r) => r).reverse();
    for (const r of order) {
      const wanted = rows[r].map((v) => {
        const near = ups[v].concat(downs[v]);
        return near.length ? near.reduce((s, w) => s + x[w], 0) / near.length : x[v];
      });
      spread(rows[r], wanted, widths).forEach((at, i) => { x[rows[r][i]] = at; });
    }
  }
  const least = widths.reduce((m, w, v) => Math.min(m, x[v] - w / 2), Infinity);
  const rowMiddle = [];
  let y = 0;
  rows.forEach((row, r) => {
    const height = row.reduce((most, v) => Math.max(most, v < boxes.length ? boxes[v].h : 0), 0);
    rowMiddle[r] = y + height / 2;
    y += height + LAYER_GAP;
  });
  const centre = (v) => ({x: x[v] - least, y: rowMiddle[rowOf[v]]});
  const width = widths.reduce((m, w, v) => Math.max(m, x[v] - least + w / 2), 0);
  return {nodes: boxes.map((_, v) => centre(v)), edges: chains.map((chain) => chain.map(centre)),
          width: width, height: Math.max(0, y - LAYER_GAP)};
}
