// SPDX-License-Identifier: MIT
#include "heapkit/emit/flame/script.hpp"

namespace heapkit {

std::string_view flame_style() {
    return R"css(
text { font-family: Verdana, "DejaVu Sans", sans-serif; font-size: 12px; fill: #000; }
#title { text-anchor: middle; font-size: 17px; }
#subtitle { text-anchor: middle; font-size: 12px; fill: rgb(110,110,110); }
#search, #matched { text-anchor: end; }
#search { opacity: 0.35; cursor: pointer; }
#search:hover, #search.active { opacity: 1; }
#unzoom { cursor: pointer; }
#frames rect { rx: 2px; ry: 2px; }
#frames > g { cursor: pointer; }
#frames > g:hover rect { stroke: #000; stroke-width: 0.5; }
#frames text { pointer-events: none; }
.hidden { display: none; }
.zoomed-out { opacity: 0.5; }
)css";
}

// Written for this project; the conventions it keeps (element ids, "Reset Zoom", the
// search colour) are flamegraph.pl's, so that both tools' graphs handle alike.
std::string_view flame_script() {
    return R"js(
(function (layout) {
  "use strict";
  var list = document.getElementById("frames");
  var details = document.getElementById("details");
  var matched = document.getElementById("matched");
  var searchButton = document.getElementById("search");
  var unzoomButton = document.getElementById("unzoom");
  var highlight = "rgb(230,0,230)";
  var titleParts = /^([\s\S]*) \(([0-9,]+) ([\s\S]*?), [-+0-9.]+%/;

  // Frames in document order: the tree's preorder, so a frame's subtree is the run of
  // frames after it at deeper levels.
  var frames = [];
  var rootY = null;
  for (var g = list.firstElementChild; g; g = g.nextElementSibling) {
    var rect = g.getElementsByTagName("rect")[0];
    var title = g.getElementsByTagName("title")[0].textContent;
    var parts = titleParts.exec(title) || [title, title, "0", ""];
    var y = parseFloat(rect.getAttribute("y"));
    if (rootY === null) rootY = y;
    g.frameIndex = frames.length;
    frames.push({
      index: frames.length, group: g, rect: rect, label: g.getElementsByTagName("text")[0],
      title: title,
      name: parts[1], value: Number(parts[2].replace(/,/g, "")), unit: parts[3],
      x: parseFloat(rect.getAttribute("x")), width: parseFloat(rect.getAttribute("width")),
      level: Math.round(Math.abs(y - rootY) / layout.step), fill: rect.getAttribute("fill")
    });
  }
  if (frames.length === 0) return;
  var fullWidth = frames[0].width;
  var zoomedAt = 0;
  var pattern = null;

  function subtreeEnd(index) {
    var end = index + 1;
    while (end < frames.length && frames[end].level > frames[index].level) end++;
    return end;
  }
  function ancestorsOf(index) {
    var found = [];
    for (var i = index - 1, level = frames[index].level; i >= 0 && level > 0; i--) {
      if (frames[i].level < level) {
        found.push(i);
        level = frames[i].level;
      }
    }
    return found;
  }
  function cut(name, room) {
    return name.length <= room ? name.join("") : name.slice(0, room - 2).join("") + "..";
  }
  function fit(frame, width) {
    var room = Math.floor((width - 3) / layout.charWidth);
    var name = Array.from(frame.name);
    // As fitted_label: an unnamed frame keeps its address, its file name is cut.
    var address = /^(.+)([+!]0x[0-9a-f]+)$/.exec(frame.name);
    if (room >= 3 && name.length > room && address && address[2].length + 3 <= room) {
      frame.label.textContent = cut(Array.from(address[1]), room - address[2].length) +
        address[2];
      return;
    }
    frame.label.textContent = room < 3 ? "" : cut(name, room);
  }
  function place(frame, x, width) {
    frame.rect.setAttribute("x", x.toFixed(1));
    frame.rect.setAttribute("width", width.toFixed(1));
    frame.label.setAttribute("x", (x + 3).toFixed(2));
    fit(frame, width);
  }
  function setClass(frame, hidden, zoomedOut) {
    frame.group.classList.toggle("hidden", hidden);
    frame.group.classList.toggle("zoomed-out", zoomedOut);
  }

  function zoom(index) {
    var target = frames[index];
    if (!target || !(target.width > 0)) return;
    var ratio = fullWidth / target.width;
    var end = subtreeEnd(index);
    var ancestors = ancestorsOf(index);
    for (var i = 0; i < frames.length; i++) {
      var frame = frames[i];
      if (index === 0) {
        setClass(frame, false, false);
        place(frame, frame.x, frame.width);
      } else if (ancestors.indexOf(i) >= 0) {
        setClass(frame, false, true);
        place(frame, frames[0].x, fullWidth);
      } else if (i >= index && i < end) {
        setClass(frame, false, false);
        place(frame, frames[0].x + (frame.x - target.x) * ratio, frame.width * ratio);
      } else {
        setClass(frame, true, false);
      }
    }
    zoomedAt = index;
    unzoomButton.classList.toggle("hidden", index === 0);
    showMatches();
  }

  function search(text) {
    var compiled;
    try {
      compiled = new RegExp(text);
    } catch (error) {
      matched.textContent = "Not a regular expression: " + text;
      return false;
    }
    pattern = compiled;
    searchButton.textContent = "Reset Search";
    searchButton.classList.add("active");
    showMatches();
    return true;
  }
  function resetSearch() {
    pattern = null;
    frames.forEach(function (frame) { frame.rect.setAttribute("fill", frame.fill); });
    searchButton.textContent = "Search";
    searchButton.classList.remove("active");
    matched.textContent = " ";
  }
  // Colours the matching frames, and shows what share of the frame zoomed into they
  // hold: a match inside a counted match is not counted again.
  function showMatches() {
    if (!pattern) return;
    var target = frames[zoomedAt];
    var end = subtreeEnd(zoomedAt);
    var total = 0;
    var countedTo = 0;
    for (var i = 0; i < frames.length; i++) {
      var hit = pattern.test(frames[i].name);
      frames[i].rect.setAttribute("fill", hit ? highlight : frames[i].fill);
      if (hit && i >= zoomedAt && i < end && i >= countedTo) {
        total += frames[i].value;
        countedTo = subtreeEnd(i);
      }
    }
    if (ancestorsOf(zoomedAt).some(function (i) { return pattern.test(frames[i].name); })) {
      total = target.value;
    }
    var share = target.value > 0 ? 100 * total / target.value : 0;
    matched.textContent = "Matched: " + share.toFixed(1) + "% (" +
      total.toLocaleString("en-US") + " " + target.unit + ")";
  }
  function askSearch() {
    if (pattern) {
      resetSearch();
      return;
    }
    var text = window.prompt("Search frames (a regular expression, e.g. ^std::)", "");
    if (text) search(text);
  }

  function frameOf(node) {
    while (node && node.parentNode !== list) node = node.parentNode;
    return node ? frames[node.frameIndex] : null;
  }
  list.addEventListener("click", function (event) {
    var frame = frameOf(event.target);
    if (frame) zoom(frame.index);
  });
  list.addEventListener("mouseover", function (event) {
    var frame = frameOf(event.target);
    if (frame) details.textContent = "Function: " + frame.title;
  });
  list.addEventListener("mouseout", function () { details.textContent = " "; });
  unzoomButton.addEventListener("click", function () { zoom(0); });
  searchButton.addEventListener("click", askSearch);
  window.addEventListener("keydown", function (event) {
    if (((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "f") ||
        event.key === "F3") {
      event.preventDefault();
      if (pattern) resetSearch();
      askSearch();
    } else if (event.key === "Escape") {
      resetSearch();
      zoom(0);
    }
  });

  // A graph taller than the window opens on its root, at the bottom, where the widest
  // frames are: not on the top of the image, the narrow tips of the deepest stacks or
  // blank. An icicle graph has its root at the top already; a graph nested in another
  // image is placed by that image.
  var rootAtBottom = frames.length > 1 && parseFloat(frames[1].rect.getAttribute("y")) < rootY;
  if (rootAtBottom && list.ownerSVGElement === document.documentElement) {
    window.addEventListener("load", function () {
      window.scrollTo(window.scrollX, document.documentElement.scrollHeight);
    });
  }

  window.heapkitFlame = {
    frames: frames,
    // A frame's index in document order, or any element inside its <g>.
    zoom: function (which) {
      var frame = typeof which === "number" ? frames[which] : frameOf(which);
      if (frame) zoom(frame.index);
    },
    resetZoom: function () { zoom(0); },
    search: search,
    resetSearch: resetSearch
  };
})
)js";
}

} // namespace heapkit
