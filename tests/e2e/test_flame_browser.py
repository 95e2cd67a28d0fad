# SPDX-License-Identifier: MIT
"""heapfold --svg in a real browser, headless Chromium: the graph renders (a screenshot
holds the frames' colours), and a scripted page clicks a frame, searches, hovers, presses
Ctrl-F and Escape, and the SVG's DOM changes as the graph promises (zoomed widths,
highlighted matches, the matched share). A graph taller than the window (CPython's: 3750
px) opens on its root, not on a blank top; an icicle graph stays at its top."""

import json
import os
import re
import subprocess

from heapkit_e2e import (check, chromium, chromium_browser, fixture, flame_frames, png_colours,
                         rgb, run, run_fixture, run_harness, tool, workdir, write_file)

chromium_browser()  # skips the test without one

directory = workdir()
dump = run_fixture(fixture("inline_cpp"), directory, args=[fixture("libplugin_fixture.so")])
graph_path = os.path.join(directory, "graph.svg")
run([tool("heapfold"), "--svg", "--title", "inline_cpp <heap>", dump, "-o", graph_path])
with open(graph_path) as f:
    svg = f.read()
frames = flame_frames(svg)
by_name = {f["name"]: f for f in frames}
height = int(re.search(r'<svg [^>]*height="(\d+)"', svg).group(1))


# 1. The screenshot: the frames are drawn, each box in its own colour.
shot = os.path.join(directory, "graph.png")
chromium(f"--screenshot={shot}", f"--window-size=1200,{height}", f"file://{graph_path}")
width, rows, colours = png_colours(shot)
check((width, rows) == (1200, height), f"screenshot is {width}x{rows}, expected 1200x{height}")
print(f"screenshot {shot}: {len(colours)} distinct colours")
check(len(colours) >= 20, f"the screenshot has {len(colours)} colours: blank?")
root = frames[0]
check(colours[rgb(root["fill"])] >= 1000,
      f"the root frame's {root['fill']} covers {colours[rgb(root['fill'])]} pixels")
for name in ("geometry::build_grids()", "shared_keep", "plugin_keep"):
    fill = rgb(by_name[name]["fill"])
    check(colours[fill] >= 20, f"{name}'s {fill} covers {colours[fill]} pixels")

# 2. A scripted page drives the graph's own handlers and reports the DOM after each step.
TARGET, CHILD = "geometry::build_grids()", "geometry::Grid<double>::allocate(unsigned long)"
harness = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>flame graph harness</title></head><body>
<object id="graph" type="image/svg+xml" data="graph.svg" width="1200" height="%d"></object>
<pre id="result">not run</pre>
<script>
"use strict";
var TARGET = %s;
document.getElementById("graph").addEventListener("load", function () {
  var win = this.contentWindow, doc = this.contentDocument, out = {};
  function frame(name) {
    return Array.prototype.find.call(doc.querySelectorAll("#frames > g"), function (g) {
      return g.querySelector("title").textContent.indexOf(name + " (") === 0;
    });
  }
  function mouse(element, type) {
    element.dispatchEvent(new win.MouseEvent(type, {bubbles: true}));
  }
  function key(init) {
    init.bubbles = true;
    win.dispatchEvent(new win.KeyboardEvent("keydown", init));
  }
  function state() {
    return {
      frames: Array.prototype.map.call(doc.querySelectorAll("#frames > g"), function (g) {
        var rect = g.querySelector("rect");
        return {title: g.querySelector("title").textContent, x: rect.getAttribute("x"),
                width: rect.getAttribute("width"), fill: rect.getAttribute("fill"),
                label: g.querySelector("text").textContent, classes: g.getAttribute("class") || "",
                textRight: g.querySelector("text").getBBox().x + g.querySelector("text").getBBox().width};
      }),
      matched: doc.getElementById("matched").textContent,
      search: doc.getElementById("search").textContent,
      unzoomHidden: doc.getElementById("unzoom").classList.contains("hidden"),
      details: doc.getElementById("details").textContent
    };
  }
  try {
    out.initial = state();
    mouse(frame(TARGET).querySelector("rect"), "click");
    out.zoomed = state();
    win.prompt = function () { return "Grid"; };
    mouse(doc.getElementById("search"), "click");
    out.searched = state();
    mouse(doc.getElementById("unzoom"), "click");
    out.unzoomed = state();
    mouse(frame(TARGET).querySelector("rect"), "mouseover");
    out.hovered = state().details;
    win.prompt = function () { return "keep$"; };
    key({key: "f", ctrlKey: true});
    out.ctrlF = state();
    key({key: "Escape"});
    out.escaped = state();
  } catch (error) {
    out.error = String(error && error.stack || error);
  }
  document.getElementById("result").textContent = JSON.stringify(out);
});
</script></body></html>
""" % (height, json.dumps(TARGET))
page = write_file(directory, "harness.html", harness)
result = run_harness(page)


def state_of(step):
    """{name: frame} of a step's DOM, names parsed from the titles as flame_frames does."""
    return {re.match(r"^(.*) \(", f["title"], re.S).group(1): f for f in result[step]["frames"]}


def share_text(part, whole):
    return f"Matched: {100 * part / whole:.1f}% ({part:,} bytes)"


initial, zoomed = state_of("initial"), state_of("zoomed")
check({n: (f["x"], f["width"]) for n, f in initial.items()} ==
      {n: (f"{by_name[n]['x']:.1f}", f"{by_name[n]['width']:.1f}") for n in by_name},
      "the page's frames are not the file's")
check(result["initial"]["unzoomHidden"], "Reset Zoom shows before any zoom")

# Drawn true: every frame as wide as its share of the root's width (within a pixel), and
# no label past its frame's right edge, as the graph opens and zoomed.
for n, f in initial.items():
    share = by_name[n]["value"] / by_name["all"]["value"] * by_name["all"]["width"]
    check(abs(float(f["width"]) - share) <= 1, f"{n}: drawn {f['width']} px wide, its share {share:.2f}")
for step in ("initial", "zoomed"):
    for n, f in state_of(step).items():
        check("hidden" in f["classes"] or not f["label"] or
              f["textRight"] <= float(f["x"]) + float(f["width"]) + 0.01,
              f"{step}: the label {f['label']!r} of {n} ends at {f['textRight']:.1f}, past its "
              f"frame's {float(f['x']) + float(f['width']):.1f}")

# Zoomed into TARGET: it fills the width, its callee scales with it, its callers stay full
# width and dimmed, other frames hide.
check(zoomed[TARGET]["width"] == f"{by_name['all']['width']:.1f}" and
      zoomed[TARGET]["x"] == f"{by_name['all']['x']:.1f}", f"zoomed target: {zoomed[TARGET]}")
ratio = by_name["all"]["width"] / by_name[TARGET]["width"]
check(abs(float(zoomed[CHILD]["width"]) - by_name[CHILD]["width"] * ratio) <= 0.1 * ratio + 0.1,
      f"callee width {zoomed[CHILD]['width']}, expected {by_name[CHILD]['width'] * ratio:.1f}")
for caller in ("main", "all"):
    check("zoomed-out" in zoomed[caller]["classes"] and
          zoomed[caller]["width"] == zoomed[TARGET]["width"], f"caller {caller}: {zoomed[caller]}")
for other in ("shared_keep", "plugin_keep"):
    check("hidden" in zoomed[other]["classes"], f"{other} not hidden: {zoomed[other]}")
check(not result["zoomed"]["unzoomHidden"], "no Reset Zoom after zooming")
check(zoomed[CHILD]["label"] == CHILD,
      f"the callee's label when zoomed: {zoomed[CHILD]['label']!r}")

# Search "Grid" while zoomed: two frames match; the share counts the outer one, of TARGET.
searched = state_of("searched")
lit = sorted(n for n, f in searched.items() if f["fill"] == "rgb(230,0,230)")
check(lit == sorted(n for n in by_name if "Grid" in n) and len(lit) == 2, f"highlighted {lit}")
check(result["searched"]["matched"] ==
      share_text(by_name[CHILD]["value"], by_name[TARGET]["value"]),
      f"zoomed search: {result['searched']['matched']!r}")
check(result["searched"]["search"] == "Reset Search", "the Search button did not turn")

# Reset Zoom: every frame back in place, the share now of the whole graph.
unzoomed = state_of("unzoomed")
check(all((f["x"], f["width"], f["classes"]) == (initial[n]["x"], initial[n]["width"], "")
          for n, f in unzoomed.items()), "Reset Zoom left frames moved or hidden")
check(result["unzoomed"]["matched"] ==
      share_text(by_name[CHILD]["value"], by_name["all"]["value"]),
      f"unzoomed search: {result['unzoomed']['matched']!r}")
check(result["hovered"] == f"Function: {by_name[TARGET]['title']}", f"hover: {result['hovered']!r}")

# Ctrl-F asks again; Escape clears search and zoom.
keep = by_name["shared_keep"]["value"] + by_name["plugin_keep"]["value"]
check(result["ctrlF"]["matched"] == share_text(keep, by_name["all"]["value"]),
      f"Ctrl-F search: {result['ctrlF']['matched']!r}")
escaped = state_of("escaped")
check(all(f["fill"] == by_name[n]["fill"] for n, f in escaped.items()) and
      result["escaped"]["search"] == "Search" and result["escaped"]["matched"].strip() == "",
      "Escape left the search on")
print(f"harness: zoom, search ({result['searched']['matched']}), reset, hover, Ctrl-F "
      f"({result['ctrlF']['matched']}) and Escape behave")

# 3. A deep graph in a window 900 px tall: one narrow stack 230 frames deep over a wide
# shallow one. It opens scrolled to its root; an icicle graph, root on top, does not move.
deep = "main;" + ";".join(f"f{i}" for i in range(230)) + " 3\nmain;serve;parse 600\nmain;start 200\n"
viewer = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="graph" src="%s" style="border:0;width:1200px;height:900px"></iframe>
<pre id="result">not run</pre>
<script>
document.getElementById("graph").addEventListener("load", function () {
  var frame = this;
  setTimeout(function () {
    var win = frame.contentWindow, doc = frame.contentDocument;
    var root = doc.querySelector("#frames > g rect").getBoundingClientRect();
    document.getElementById("result").textContent = JSON.stringify({
      scrollY: win.scrollY, innerHeight: win.innerHeight, rootTop: root.top,
      rootBottom: root.bottom});
  }, 200);
});
</script></body></html>
"""
for name, flags in (("deep", []), ("deep_icicle", ["--inverted"])):
    drawn = subprocess.run([fixture("flame_from_folded"), *flags], input=deep,
                           capture_output=True, text=True, check=True).stdout
    write_file(directory, f"{name}.svg", drawn)
    page = write_file(directory, f"{name}.html", viewer % f"{name}.svg")
    view = run_harness(page)
    check(0 <= view["rootTop"] and view["rootBottom"] <= view["innerHeight"],
          f"{name}: the root is not in the first screen: {view}")
    check((view["scrollY"] > 0) == (name == "deep"), f"{name}: scrolled to {view['scrollY']}")

# 4. Wide letters: fitted by an average character's width, "WWW…" would run past its frame
# and over its neighbour's label; the page measures and cuts it inside.
wide = "main;" + "W" * 60 + " 300\nmain;" + "Mm" * 30 + " 300\nmain;next 400\n"
write_file(directory, "wide.svg", subprocess.run([fixture("flame_from_folded")], input=wide,
                                                 capture_output=True, text=True, check=True).stdout)
labels = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="graph" src="wide.svg" style="border:0;width:1200px;height:400px"></iframe>
<pre id="result">not run</pre>
<script>
document.getElementById("graph").addEventListener("load", function () {
  var doc = this.contentDocument;
  document.getElementById("result").textContent = JSON.stringify(
    Array.prototype.map.call(doc.querySelectorAll("#frames > g"), function (g) {
      var rect = g.querySelector("rect").getBBox(), text = g.querySelector("text").getBBox();
      return {label: g.querySelector("text").textContent, right: rect.x + rect.width,
              textRight: text.x + text.width};
    }));
});
</script></body></html>
"""
drawn = run_harness(write_file(directory, "wide.html", labels))
past = [f for f in drawn if f["label"] and f["textRight"] > f["right"] + 0.01]
check(not past and any(f["label"].startswith("WW") for f in drawn),
      f"labels past their frames: {past}")
print("ok")
