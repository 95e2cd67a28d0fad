// SPDX-License-Identifier: MIT
// Colours that mean something: a frame's hue is its module's (the program, libc, a
// plugin), the modules ranked once, as the page opens, by what their own frames hold, so
// that a colour stays with its module through zooms, refinements and sample types; a
// function's lightness varies a little within its module's hue, so that neighbours stay
// apart. A change is drawn red where it grew and blue where it shrank (as the SVG): red
// and blue, unlike red and green, are told apart by colour-blind readers.
"use strict";

// Hues far apart on the wheel, the largest modules first; the rest share grey.
const MODULE_HUES = [210, 30, 120, 280, 0, 175, 55, 320, 95, 245];
let moduleOfFunction = null; // function string id: its module's string id
let moduleRank = null; // module string id: its place in MODULE_HUES (or beyond)
let modulesRanked = []; // module string ids, the largest first

// Each function's module (its first frame's), and the modules ranked by the values of
// the stacks that end in them, of the page's first column and sample type.
function rankModules() {
  moduleOfFunction = new Map();
  const modules = frameModulesByFrame();
  for (let f = 0; f < modules.length; f++) {
    if (modules[f] > 0 && !moduleOfFunction.has(frameName(f))) {
      moduleOfFunction.set(frameName(f), modules[f]);
    }
  }
  const held = new Map();
  const values = D.columns[0][D.type];
  D.leaves.forEach((node, leaf) => {
    const module = modules[D.nodeFrames[node]];
    if (module > 0) {
      held.set(module, (held.get(module) || 0) + Math.abs(values[leaf] || 0));
    }
  });
  moduleOfFunction.forEach((module) => held.set(module, held.get(module) || 0));
  modulesRanked = Array.from(held.keys()).sort((a, b) => held.get(b) - held.get(a) || (compareNames(a, b) < 0 ? -1 : 1));
  moduleRank = new Map(modulesRanked.map((m, i) => [m, i]));
}

// A small, stable hash of a string id's text: the lightness step within a hue.
function nameHash(id) {
  const s = nameOf(id);
  let h = 0;
  for (let i = 0; i < s.length; i++) {
    h = (h * 31 + s.charCodeAt(i)) | 0;
  }
  return h >>> 0;
}

// The colour of a frame of function `id` drawn by module, found once per function.
const colourOfFunction = new Map();
function moduleColour(id) {
  let colour = colourOfFunction.get(id);
  if (colour === undefined) {
    colour = findModuleColour(id);
    colourOfFunction.set(id, colour);
  }
  return colour;
}
function findModuleColour(id) {
  if (!moduleOfFunction) {
    rankModules();
  }
  const rank = moduleRank.get(moduleOfFunction.get(id));
  const light = 72 + (nameHash(id) % 5) * 2; // 72-80%: text stays dark on it
  if (rank === undefined || rank >= MODULE_HUES.length) {
    return "hsl(0,0%," + light + "%)";
  }
  return "hsl(" + MODULE_HUES[rank] + ",60%," + light + "%)";
}

// The colour of a change: the more it grew, the redder; the more it shrank, the bluer.
function changeColour(change, maxChange) {
  const scale = maxChange > 0 ? Math.min(1, Math.abs(change) / maxChange) : 0;
  if (change === 0 || scale < 0.002) {
    return "rgb(220,220,220)";
  }
  const v = Math.round(220 * (1 - scale)) + 20;
  return change > 0 ? "rgb(255," + v + "," + v + ")" : "rgb(" + v + "," + v + ",255)";
}

function swatch(legend, colour, text) {
  const box = el("span", {class: "swatch"});
  box.style.background = colour;
  legend.appendChild(box);
  legend.appendChild(el("span", {class: "legend-text"}, text));
}

// The header's legend: what the colours say.
function renderLegend() {
  const legend = $("legend");
  legend.hidden = false;
  legend.replaceChildren(document.createTextNode("Colours: "));
  if (base) {
    swatch(legend, changeColour(1, 1), "grew (new > base)");
    swatch(legend, changeColour(-1, 1), "shrank (new < base)");
    swatch(legend, changeColour(0, 1), "unchanged");
    legend.appendChild(document.createTextNode("; widths by the " + state.side + " values"));
    return;
  }
  if (!moduleOfFunction) {
    rankModules();
  }
  legend.appendChild(document.createTextNode("by module "));
  modulesRanked.slice(0, MODULE_HUES.length).forEach((m, i) => {
    swatch(legend, "hsl(" + MODULE_HUES[i] + ",60%,76%)", nameOf(m));
  });
  if (modulesRanked.length > MODULE_HUES.length) {
    swatch(legend, "hsl(0,0%,76%)", (modulesRanked.length - MODULE_HUES.length) + " other modules");
  }
}
