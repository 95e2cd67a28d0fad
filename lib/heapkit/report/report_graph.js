// SPDX-License-Identifier: MIT
// The call graph's nodes and edges, chosen by pprof's rules (google/pprof
// internal/report/report.go newTrimmedGraph, internal/graph/graph.go) with pprof's
// defaults: nodes whose cum is under nodefraction (0.005) of the total dropped, the graph
// built again without them (a call over dropped frames becomes a residual edge), the
// nodes ordered by entropy and the first nodecount (80) kept, the graph built again,
// edges under edgefraction (0.001) dropped, and residual edges another path already
// explains removed. Nodes are functions (the tree's names), after the refinements.
"use strict";

const NODE_FRACTION = 0.005;
const EDGE_FRACTION = 0.001;
const NODE_COUNT = 80;

// The graph of the tree's stacks weighted by `values` (a side's {self, total}), keeping
// the functions in `kept` (a Set of name ids; null: all), as pprof's graph.New: per stack
// each node's cum and each edge's weight counted once, a node's flat only where the
// stack ends in it, an edge residual when a dropped frame lay between its ends.
function buildGraph(values, kept) {
  const nodes = new Map(); // name id: {id, flat, cum, ins: Map, outs: Map}
  const count = tree.name.length;
  const node = (id) => {
    let n = nodes.get(id);
    if (!n) {
      n = {id: id, flat: 0, cum: 0, ins: new Map(), outs: new Map()};
      nodes.set(id, n);
    }
    return n;
  };
  // Per tree node: the last kept function on its path (-1: none) and whether frames
  // were dropped after it.
  const lastKept = new Int32Array(count).fill(-1);
  const residual = new Uint8Array(count);
  const onPath = new Map(); // an edge's key: how often it is on the path walked
  const walk = [0, 1];
  while (walk.length) {
    const entering = walk.pop();
    const n = walk.pop();
    const p = tree.parent[n];
    const id = tree.name[n];
    const isKept = n > 0 && (!kept || kept.has(id));
    const from = n > 0 ? lastKept[p] : -1;
    const key = isKept && from >= 0 && from !== id ? from * nameCount + id : -1;
    if (!entering) {
      if (key >= 0) {
        onPath.set(key, onPath.get(key) - 1);
      }
      continue;
    }
    if (n > 0) {
      lastKept[n] = isKept ? id : from;
      residual[n] = isKept ? 0 : 1;
    }
    const value = values.total[n];
    if (isKept && value !== 0) {
      const to = node(id);
      if (tree.outer[n]) {
        to.cum += value;
      }
      to.flat += values.self[n];
      const depth = key >= 0 ? onPath.get(key) || 0 : 1;
      if (depth === 0) {
        addEdge(node(from), to, value, residual[p] === 1);
      }
    }
    if (key >= 0) {
      onPath.set(key, (onPath.get(key) || 0) + 1);
    }
    walk.push(n, 0);
    // Children straight from the depth-first numbering: tree.children[n] makes an array
    // a node, and this walk visits every node.
    for (let kid = n + 1; kid < tree.end[n]; kid = tree.end[kid]) {
      walk.push(kid, 1);
    }
  }
  return Array.from(nodes.values()).filter((n) => n.cum !== 0 || n.flat !== 0);
}

function addEdge(from, to, value, residual) {
  let e = from.outs.get(to.id);
  if (!e) {
    e = {from: from, to: to, value: 0, residual: false};
    from.outs.set(to.id, e);
    to.ins.set(from.id, e);
  }
  e.value += value;
  e.residual = e.residual || residual;
}

// pprof's entropyScore: nodes where calls fan in or out score above those a call only
// passes through.
function edgeEntropy(edges, self) {
  let total = self;
  edges.forEach((e) => { total += e.value > 0 ? Math.abs(e.value) : 0; });
  let score = 0;
  if (total !== 0) {
    const term = (v) => {
      const f = Math.abs(v) / total;
      return f > 0 ? -f * Math.log2(f) : 0; // Go's 0 * -Inf is NaN; no edge has 0
    };
    edges.forEach((e) => { score += term(e.value); });
    if (self > 0) {
      score += term(self);
    }
  }
  return score;
}
function entropyScore(n) {
  const into = n.ins.size === 0 ? 1 : edgeEntropy(n.ins, 0);
  const out = n.outs.size === 0 ? 1 : edgeEntropy(n.outs, n.flat);
  return Math.trunc((into + out) * n.cum) + n.flat;
}
function byName(a, b) {
  return compareNames(a.id, b.id);
}
function entropyOrder(nodes) {
  const score = new Map(nodes.map((n) => [n, Math.abs(entropyScore(n))]));
  return nodes.sort((a, b) => score.get(b) - score.get(a) || byName(a, b) ||
                     Math.abs(b.flat) - Math.abs(a.flat));
}

function trimEdges(nodes, cutoff) {
  let dropped = 0;
  for (const n of nodes) {
    n.ins.forEach((e, from) => {
      if (Math.abs(e.value) < cutoff) {
        n.ins.delete(from);
        e.from.outs.delete(n.id);
        dropped++;
      }
    });
  }
  return dropped;
}

// pprof's RemoveRedundantEdges: from the last node up, its lightest residual edges in
// first, each removed where its callee is reached from its caller another way.
function removeRedundantEdges(nodes) {
  const heaviest = (a, b) => Math.abs(b.value) - Math.abs(a.value) || byName(a.from, b.from) ||
                             byName(a.to, b.to);
  for (let i = nodes.length - 1; i >= 0; i--) {
    const ins = Array.from(nodes[i].ins.values()).sort(heaviest);
    for (let j = ins.length - 1; j >= 0 && ins[j].residual; j--) {
      if (reachedOtherwise(ins[j])) {
        ins[j].to.ins.delete(ins[j].from.id);
        ins[j].from.outs.delete(ins[j].to.id);
      }
    }
  }
}
function reachedOtherwise(edge) {
  const seen = new Set([edge.to]);
  const queue = [edge.to];
  while (queue.length) {
    for (const e of queue.shift().ins.values()) {
      if (e === edge || seen.has(e.from)) {
        continue;
      }
      if (e.from === edge.from) {
        return true;
      }
      seen.add(e.from);
      queue.push(e.from);
    }
  }
  return false;
}

// The graph pprof -dot draws of `values`: {nodes (in pprof's order), total, cutoffs,
// and what was dropped}.
function trimmedGraph(values) {
  let nodes = buildGraph(values, null);
  const total = nodes.reduce((sum, n) => sum + n.flat, 0);
  const nodeCutoff = Math.abs(Math.trunc(total * NODE_FRACTION));
  const edgeCutoff = Math.abs(Math.trunc(total * EDGE_FRACTION));
  let droppedNodes = 0;
  if (nodeCutoff > 0) {
    const kept = nodes.filter((n) => Math.abs(n.cum) >= nodeCutoff);
    if (kept.length !== nodes.length) {
      droppedNodes = nodes.length - kept.length;
      nodes = buildGraph(values, new Set(kept.map((n) => n.id)));
    }
  }
  const shownOf = nodes.length;
  entropyOrder(nodes);
  trimEdges(nodes, edgeCutoff);
  if (nodes.length > NODE_COUNT) {
    nodes = entropyOrder(buildGraph(values, new Set(nodes.slice(0, NODE_COUNT).map((n) => n.id))));
  }
  const droppedEdges = trimEdges(nodes, edgeCutoff);
  removeRedundantEdges(nodes);
  return {nodes: nodes, total: total, shownOf: shownOf, nodeCutoff: nodeCutoff, edgeCutoff: edgeCutoff,
          droppedNodes: droppedNodes, droppedEdges: droppedEdges};
}

// pprof's legend lines under its graph.
function graphLegend(g) {
  const shown = g.nodes.reduce((sum, n) => sum + n.flat, 0);
  const lines = ["Showing nodes accounting for " + quantity(shown) + ", " + percent(shown, g.total) +
                 " of " + quantity(g.total) + " total"];
  if (g.droppedNodes > 0) {
    lines.push("Dropped " + g.droppedNodes + " node" + (g.droppedNodes > 1 ? "s" : "") +
               " (cum <= " + quantity(g.nodeCutoff) + ")");
  }
  if (g.droppedEdges > 0) {
    lines.push("Dropped " + g.droppedEdges + " edge" + (g.droppedEdges > 1 ? "s" : "") +
               " (freq <= " + quantity(g.edgeCutoff) + ")");
  }
  if (g.nodes.length < g.shownOf) {
    lines.push("Showing top " + g.nodes.length + " nodes out of " + g.shownOf);
  }
  return lines;
}
