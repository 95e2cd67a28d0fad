// SPDX-License-Identifier: MIT
// The SVG flame graph's interactivity (emit/flame/script.hpp says what it relies on and
// offers). Written for this project; the conventions it keeps (element ids, "Reset Zoom",
// the search colour) are flamegraph.pl's, so that both tools' graphs handle alike.
"use strict";

// The frames of #frames in document order: the tree's preorder, so a frame's subtree is
// the run of frames after it at deeper levels. Each knows its parent and children.
function flameFrames(list, layout) {
  const titleParts = /^([\s\S]*) \(([0-9,]+) ([\s\S]*?), [-+0-9.]+%/;
  const frames = [];
  const lastAtLevel = [];
  let rootY = null;
  for (let g = list.firstElementChild; g; g = g.nextElementSibling) {
    const rect = g.getElementsByTagName("rect")[0];
    const title = g.getElementsByTagName("title")[0].textContent;
    const parts = titleParts.exec(title) || [title, title, "0", ""];
    const y = parseFloat(rect.getAttribute("y"));
    if (rootY === null) {
      rootY = y;
    }
    const level = Math.round(Math.abs(y - rootY) / layout.step);
    const parent = level > 0 ? lastAtLevel[level - 1] : -1;
    lastAtLevel[level] = frames.length;
    g.frameIndex = frames.length;
    frames.push({
      index: frames.length, group: g, rect: rect, label: g.getElementsByTagName("text")[0],
      title: title,
      name: parts[1], value: Number(parts[2].replace(/,/g, "")), unit: parts[3],
      x: parseFloat(rect.getAttribute("x")), width: parseFloat(rect.getAttribute("width")),
      level: level, fill: rect.getAttribute("fill"), parent: parent, children: []
    });
    if (parent >= 0) {
      frames[parent].children.push(frames.length - 1);
    }
  }
  return {frames: frames, rootY: rootY};
}

// A string's width in pixels in `text`'s font (a canvas measures it without laying out
// the document), or null where there is no canvas.
function textMeasure(text) {
  const canvas = text && document.createElementNS("http://www.w3.org/1999/xhtml", "canvas");
  const context = canvas && canvas.getContext ? canvas.getContext("2d") : null;
  if (!context) {
    return null;
  }
  const style = window.getComputedStyle(text);
  context.font = style.fontSize + " " + style.fontFamily;
  return (s) => context.measureText(s).width;
}

function interactiveFlameGraph(layout) {
  const list = document.getElementById("frames");
  const details = document.getElementById("details");
  const matched = document.getElementById("matched");
  const searchButton = document.getElementById("search");
  const unzoomButton = document.getElementById("unzoom");
  const highlight = "rgb(230,0,230)";

  const found = flameFrames(list, layout);
  const frames = found.frames;
  if (frames.length === 0) {
    return;
  }
  const resting = details.textContent; // what is left out, when nothing is hovered
  const fullWidth = frames[0].width;
  const parentOf = (i) => frames[i].parent;
  let zoomedAt = 0;
  let pattern = null;

  function subtreeEnd(index) {
    let end = index + 1;
    while (end < frames.length && frames[end].level > frames[index].level) {
      end++;
    }
    return end;
  }
  // The labels' drawn widths, measured in the labels' own font: the C++ fitted them by
  // an average character, and a wide name would run past its frame.
  const measure = textMeasure(frames.length ? frames[0].label : null);
  function fit(frame, width) {
    const label = measuredLabel(frame.name, width - 3, layout.charWidth, measure);
    if (frame.label.textContent !== label) { // most are already right: no needless redraw
      frame.label.textContent = label;
    }
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
    const target = frames[index];
    if (!target || !(target.width > 0)) {
      return;
    }
    const ratio = fullWidth / target.width;
    const end = subtreeEnd(index);
    const ancestors = ancestorsOf(parentOf, index);
    frames.forEach((frame, i) => {
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
    });
    zoomedAt = index;
    unzoomButton.classList.toggle("hidden", index === 0);
    showMatches();
  }

  function search(text) {
    const compiled = compilePattern(text, false);
    if (!compiled) {
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
    frames.forEach((frame) => frame.rect.setAttribute("fill", frame.fill));
    searchButton.textContent = "Search";
    searchButton.classList.remove("active");
    matched.textContent = " ";
  }
  // Colours the matching frames, and shows what share of the frame zoomed into they
  // hold; where the zoomed frame's caller matches, all of it.
  function showMatches() {
    if (!pattern) {
      return;
    }
    const hits = frames.map((frame) => pattern.test(frame.name));
    frames.forEach((frame, i) => frame.rect.setAttribute("fill", hits[i] ? highlight : frame.fill));
    const target = frames[zoomedAt];
    let total = matchedValue(zoomedAt, (i) => frames[i].children, (i) => hits[i],
                             (i) => frames[i].value, true);
    if (ancestorsOf(parentOf, zoomedAt).some((i) => hits[i])) {
      total = target.value;
    }
    matched.textContent = matchedLine(total, target.value, withThousands(total) + " " + target.unit);
  }
  function askSearch() {
    if (pattern) {
      resetSearch();
      return;
    }
    const text = window.prompt("Search frames (a regular expression, e.g. ^std::)", "");
    if (text) {
      search(text);
    }
  }

  function frameOf(node) {
    while (node && node.parentNode !== list) {
      node = node.parentNode;
    }
    return node ? frames[node.frameIndex] : null;
  }
  list.addEventListener("click", (event) => {
    const frame = frameOf(event.target);
    if (frame) {
      zoom(frame.index);
    }
  });
  list.addEventListener("mouseover", (event) => {
    const frame = frameOf(event.target);
    if (frame) {
      details.textContent = "Function: " + frame.title;
    }
  });
  list.addEventListener("mouseout", () => { details.textContent = resting; });
  unzoomButton.addEventListener("click", () => zoom(0));
  searchButton.addEventListener("click", askSearch);
  window.addEventListener("keydown", (event) => {
    if (((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "f") ||
        event.key === "F3") {
      event.preventDefault();
      if (pattern) {
        resetSearch();
      }
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
  const rootAtBottom = frames.length > 1 &&
    parseFloat(frames[1].rect.getAttribute("y")) < found.rootY;
  if (rootAtBottom && list.ownerSVGElement === document.documentElement) {
    window.addEventListener("load", () => {
      window.scrollTo(window.scrollX, document.documentElement.scrollHeight);
    });
  }

  frames.forEach((frame) => fit(frame, frame.width));

  window.heapkitFlame = {
    frames: frames,
    // A frame's index in document order, or any element inside its <g>.
    zoom: (which) => {
      const frame = typeof which === "number" ? frames[which] : frameOf(which);
      if (frame) {
        zoom(frame.index);
      }
    },
    resetZoom: () => zoom(0),
    search: search,
    resetSearch: resetSearch
  };
}
