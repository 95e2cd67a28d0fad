# SPDX-License-Identifier: MIT
"""heapfold --html in a real browser (Debian's headless Chromium over the DevTools pipe,
tests/e2e/cdp.py): a dump of the C++ fixture, a --base change of two runs of leaky, and a
--growth series of leaky. The page loads with no console error and no request beyond its
own file; Top shows what heapfold --text prints for every sample type; a real click on a
function selects it in every view; search reports the share the folded stacks give; the
in-page refinement gives --text --focus's total and is undone; a change's columns are
--text --base's, its colours follow the signs and its totals are each side's; a series'
window compares the dumps it spans. Screenshots of every view are kept when
HEAPKIT_KEEP_SCREENSHOTS names a directory (to look at them) and checked not blank."""

import bisect
import colorsys
import functools
import glob
import json
import os
import re
import shutil
from html import unescape

from heapkit_e2e import (PROFILE_CONF, JEMALLOC_SO, SOURCE_DIR, check, chromium_browser, fixture,
                         go_pprof, marker_line, parse_folded, png_colours, run, run_fixture,
                         sum_where, tool, workdir, write_synthetic_dump)

chromium_browser()  # skips the test without one
from cdp import Browser  # noqa: E402 (after the skip)

work = workdir()
shots = os.environ.get("HEAPKIT_KEEP_SCREENSHOTS") or work
UNITS = ["B", "kB", "MB", "GB", "TB"]


def quantity(value):
    """emit/quantity.cpp's spelling of a number of bytes."""
    magnitude, unit = abs(value), 0
    while magnitude >= 1024 and unit + 1 < len(UNITS):
        magnitude /= 1024
        unit += 1
    if unit == 0:
        return f"{value}B"
    return f"{'-' if value < 0 else ''}{magnitude:.2f}{UNITS[unit]}"


def heapfold(*args):
    return run([tool("heapfold"), "-q", *args]).stdout


def text_table(*args):
    """heapfold --text's header total and {function: (flat, cum)}, as printed."""
    lines = heapfold("--text", *args).splitlines()
    total = re.search(r": (-?\S+) total", lines[0]).group(1)
    rows = {}
    for line in lines[2:]:
        flat, _, _, cum, _, name = line.split(None, 5)
        rows[name] = (flat, cum)
    return total, rows


def page_rows(browser):
    return browser.evaluate("Array.from(document.querySelectorAll('#top tbody tr'))"
                            ".map(function(tr){return Array.from(tr.cells).map("
                            "function(td){return td.textContent;});})")


def text_of(browser, element_id):
    return browser.evaluate(f"document.getElementById({json.dumps(element_id)}).textContent")


def choose(browser, element_id, value):
    browser.evaluate(f"(function(){{var s=document.getElementById({json.dumps(element_id)});"
                     f"s.value={json.dumps(str(value))};"
                     "s.dispatchEvent(new Event(s.tagName==='SELECT'?'change':'input'));})()")


def types_of(browser):
    return browser.evaluate("window.heapkitReport.data.types.map(function(t){return t.name;})")


def screenshot(browser, name):
    path = browser.screenshot(os.path.join(shots, name))
    _, _, colours = png_colours(path)
    check(len(colours) >= 8, f"{name}: {len(colours)} colours, blank?")
    return path


# Each frame drawn in #flame: its node, box and name (the tooltip's first line, as a
# reader hovering it reads it), and its label's text box.
FRAMES_DRAWN = """Array.from(document.querySelectorAll('#flame div[data-node]')).map(function(d){
  var r=d.getBoundingClientRect(), range=document.createRange();
  d.dispatchEvent(new MouseEvent('mousemove',{bubbles:true,clientX:r.left+1,clientY:r.top+1}));
  range.selectNodeContents(d);
  var t=range.getBoundingClientRect();
  return {node:d.dataset.node,left:r.left,right:r.right,top:r.top,width:r.width,
          name:document.getElementById('tooltip').textContent.split('\\n')[0],
          label:d.textContent,textLeft:t.left,textRight:t.right};}).concat(
  [document.getElementById('tooltip').hidden=true]).slice(0,-1)"""


def search_for(browser, text):
    """Types `text` into the search, and waits for the page to draw it (once the keys pause)."""
    browser.type_into("#search", text)
    browser.evaluate("window.heapkitReport.settled().then(function(){return 1;})")


def shown_state(browser):
    """What the page shows of its state: the view, the header's lines, the controls and
    the flame graph's crumbs and frames."""
    return browser.evaluate("""(function(){function t(id){return document.getElementById(id).textContent;}
      return {view:document.querySelector('#tabs button.active').textContent,
        total:t('total'),matched:t('matched'),selected:t('selected'),refinements:t('refinements'),
        search:document.getElementById('search').value,type:document.getElementById('type').value,
        crumbs:t('crumbs'),frames:document.querySelectorAll('#flame div').length};})()""")


def stack_trie(stacks):
    """The folded stacks as a tree of dicts: each path's node {"value": its stacks' sum,
    "kids": {name: node}}, so that a path's value and children are found without a scan."""
    root = {"value": 0, "kids": {}}
    for stack, v in stacks.items():
        node = root
        node["value"] += v
        for name in stack.split(";"):
            node = node["kids"].setdefault(name, {"value": 0, "kids": {}})
            node["value"] += v
    return root


def trie_node(trie, path):
    for name in path:
        trie = trie["kids"].get(name)
        if trie is None:
            return {"value": 0, "kids": {}}
    return trie


def check_frames_true(browser, stacks, what):
    """In the icicle graph at its root: every frame as wide as its stacks' share of the
    graph's width (within a pixel), from the folded stacks; every label inside its frame."""
    drawn = browser.evaluate(FRAMES_DRAWN)
    px = browser.evaluate("document.getElementById('flame').getBoundingClientRect().width")
    whole = sum(stacks.values())
    trie = stack_trie(stacks)
    rows = {}  # a row's frames by their left edges: a frame's parent found by bisection
    for frame in sorted(drawn, key=lambda f: f["left"]):
        rows.setdefault(round(frame["top"]), []).append(frame)
    paths, wrong = {}, []
    for frame in sorted(drawn, key=lambda f: f["top"]):
        # The parent: in the row above, the frame whose box holds this one's left edge.
        above = [p for top in (-1, 0, 1) for p in rows.get(round(frame["top"]) - 17 + top, [])
                 if abs(p["top"] + 17 - frame["top"]) < 0.5]
        lefts = sorted(p["left"] for p in above)
        at = bisect.bisect_right(lefts, frame["left"] + 0.01)
        parent = max((p for p in above if p["left"] == lefts[at - 1]),
                     key=lambda p: p["left"]) if at else None
        paths[frame["node"]] = (paths[parent["node"]] + (frame["name"],)) if parent else ()
        path = paths[frame["node"]]
        value = trie_node(trie, path)["value"]
        if abs(frame["width"] - value / whole * px) > 1:
            wrong.append(f"{' > '.join(path) or 'all'} drawn {frame['width']:.2f} px wide, its "
                         f"{value} of {whole} are {value / whole * px:.2f} px")
        if frame["label"] and not (frame["textLeft"] >= frame["left"] - 0.01 and
                                   frame["textRight"] <= frame["right"] + 0.01):
            wrong.append(f"the label {frame['label']!r} runs past its frame: text "
                         f"{frame['textLeft']:.1f}-{frame['textRight']:.1f}, frame "
                         f"{frame['left']:.1f}-{frame['right']:.1f}")
    check(not wrong, f"{what}: {len(wrong)} frames drawn untrue:\n" + "\n".join(wrong[:8]))
    # A drawn frame's children narrower than a pixel: one merged block where they add up
    # to a pixel (as wide as their sum), else left out; the line under the graph counts both.
    merged, left_out, blocks = 0, 0, []
    for path in set(paths.values()):
        children = {name: kid["value"] for name, kid in trie_node(trie, path)["kids"].items()}
        thin = [v for v in children.values() if 0 < v / whole * px < 1]
        if thin and sum(thin) / whole * px >= 1:
            merged += len(thin)
            blocks.append(sum(thin) / whole * px)
        else:
            left_out += len(thin)
    note = browser.evaluate("document.getElementById('flame-note').textContent")
    drawn_blocks = browser.evaluate("Array.from(document.querySelectorAll('#flame div.merged'))"
                                    ".map(function(d){return d.getBoundingClientRect().width;})")
    check(len(drawn_blocks) == len(blocks) and
          all(abs(a - b) <= 1 for a, b in zip(sorted(drawn_blocks), sorted(blocks))) and
          (f"{merged} frames narrower than a pixel drawn merged" in note) == (merged > 0) and
          (f"{left_out} left out" in note) == (left_out > 0),
          f"{what}: {merged} narrow frames to merge into blocks {blocks}, {left_out} to leave "
          f"out; the page drew blocks {drawn_blocks} and says {note!r}")
    print(f"{what}: {len(drawn)} frames drawn as wide as their values, labels inside; "
          f"{note!r}")


def peek_list(browser):
    """The Peek list: {callers: [(name, calls)], function: [(name, flat, cum)], callees}."""
    rows = browser.evaluate("""Array.from(document.querySelectorAll('#peek tbody tr[data-function]'))
      .map(function(tr){var c=Array.from(tr.cells).map(function(td){return td.textContent;});
        return [tr.className.split(' ')[0], c[6].replace(/^[\u2191\u2193] /,''), c[0], c[2], c[4]];})""")
    return {"callers": [(r[1], r[4]) for r in rows if r[0] == "caller"],
            "function": [(r[1], r[2], r[3]) for r in rows if r[0] == "self"],
            "callees": [(r[1], r[4]) for r in rows if r[0] == "callee"]}


def pprof_peek(profile, name, sample):
    """go tool pprof -peek's callers, function and callees of `name`, as peek_list's (values
    as numbers, "(inline)" marks dropped)."""
    text = go_pprof("-peek", f"^{re.escape(name)}$", "-unit=B", f"-sample_index={sample}",
                    profile).stdout
    found = {"callers": [], "function": [], "callees": []}
    for line in text.split("calls% + context")[1].splitlines():
        edge = re.match(r"^\s+(-?\d+)B?\s+\S+% \|   (.*?)(?: \(inline\))?$", line)
        node = re.match(r"^\s+(-?\d+)B?\s+\S+%\s+\S+%\s+(-?\d+)B?\s+\S+%\s+\| (.*)$", line)
        if node:
            found["function"].append((node.group(3), int(node.group(1)), int(node.group(2))))
        elif edge:
            found["callees" if found["function"] else "callers"].append((edge.group(2), int(edge.group(1))))
    check(len(found["function"]) == 1, f"go tool pprof -peek {name}:\n{text}")
    return found


RAW_LINE = re.compile(r"^\s+(?:\d+: 0x\w+ M=\d+ )?(.*) \S*:-?\d+ s=\d+\((.*)\)$")


def names_by_symbol(profile, symbolize):
    """go tool pprof -raw's function names, by their mangled (system) names."""
    text = go_pprof("-raw", f"-symbolize={symbolize}", profile).stdout
    return {m.group(2): m.group(1) for m in map(RAW_LINE.match, text.split("Locations", 1)[1].splitlines())
            if m}


def check_short_names(browser, profile, language, cxx):
    """The page's forms of each function's name are pprof's: without parameters and return
    type, its demangler's (demangle=templates, from the mangled name) wherever it shortens
    one; the short name, what go tool pprof -dot labels the function with."""
    forms = "window.heapkitReport.nameForms"
    checked = 0
    if cxx:
        full = names_by_symbol(profile, "none")
        short = names_by_symbol(profile, "remote:demangle=templates")
        pairs = {full[k]: short[k] for k in full if k in short and short[k] != full[k]}
        ours = browser.evaluate(f"{json.dumps(sorted(pairs))}.map(function(n){{return {forms}(n).noParameters;}})")
        # Go's demangler spells a template's end "> >" where the one heapkit reads says ">>".
        wrong = [(n, o, pairs[n]) for n, o in zip(sorted(pairs), ours)
                 if re.sub(r">\s+(?=>)", ">", o) != re.sub(r">\s+(?=>)", ">", pairs[n])]
        check(pairs and not wrong, f"{language}: names without parameters differ from pprof's: {wrong}")
        checked += len(pairs)
    dot = go_pprof("-dot", "-symbolize=none", "-nodecount=100000", "-nodefraction=0", "-edgefraction=0",
                   profile).stdout
    labels = {}
    for node in re.finditer(r'^N\d+ \[label="((?:[^"\\]|\\.)*)".*?tooltip="((?:[^"\\]|\\.)*) \(',
                            dot, re.M):
        # The name's lines, then flat and cum: "84kB (18.74%)", "0 of 80kB (17.85%)", or
        # "3kB (0.13%)" and "of 499kB (21.55%)".
        lines = node.group(1).split("\\n")
        while lines and re.match(r"^(of )?-?[\d.]+\w*( of -?[\d.]+\w*)?( \(.*\))?$", lines[-1]):
            lines.pop()
        labels[node.group(2).replace('\\"', '"')] = lines
    names = sorted(labels)
    ours = browser.evaluate(f"{json.dumps(names)}.map(window.heapkitReport.pprofShortName)")
    wrong = [(n, o, labels[n]) for n, o in zip(names, ours)
             if re.split(r"::|\.", o.replace('"', '\\"')) != labels[n]]
    check(len(names) >= 10 and not wrong,
          f"{language}: short names differ from go tool pprof -dot's: {wrong[:10]}")
    checked += len(names)
    print(f"{language}: {checked} names shortened as pprof shortens them")


def check_labels_fit(browser, language):
    """In a narrow graph each frame shows the first of its name's forms that fits, and its
    tooltip the whole name; some frames show a shortened form."""
    browser.evaluate("document.getElementById('flame').style.width='420px';"
                     "window.heapkitReport.render();0")
    drawn = browser.evaluate(FRAMES_DRAWN)
    char_px = browser.evaluate("(function(){var c=document.createElement('canvas').getContext('2d'),"
                               "s=getComputedStyle(document.getElementById('flame'));"
                               "c.font=s.fontSize+' '+s.fontFamily;return c.measureText('M').width;})()")
    shortened = 0
    frames = [f for f in drawn if f["node"] != "0"]
    labels = browser.evaluate(f"{json.dumps([f['name'] for f in frames])}.map(function(n)"
                              "{return window.heapkitReport.nameForms(n).labels;})")
    for frame, forms in zip(frames, labels):
        room = (frame["width"] - 6) / char_px
        label = frame["label"]
        fitting = [f for f in forms if len(f) <= room]
        check(label == (fitting[0] if fitting else label) and (fitting or not label or
                                                                label.endswith("..")),
              f"{language}: {frame['name']!r} drawn {frame['width']:.0f} px wide as {label!r}; "
              f"its forms {forms}")
        shortened += label != frame["name"] and label in forms
    check(shortened >= 3, f"{language}: {shortened} frames show a shortened name")
    browser.evaluate("document.getElementById('flame').style.width='';window.heapkitReport.render();0")
    print(f"{language}: {len(drawn)} frames, {shortened} labelled with a shortened name")


def check_module_colours(browser, profile):
    """Each frame's hue is its module's in the legend, the module pprof gives its function
    (go tool pprof -raw's mapping), and stays so through a refinement."""
    text = go_pprof("-raw", "-symbolize=none", profile).stdout
    mappings = {m.group(1): os.path.basename(m.group(2)) for m in
                re.finditer(r"^\s*(\d+): 0x\w+/0x\w+/0x\w+ (\S+)", text, re.M)}
    module_of = {}
    for m in re.finditer(r"^\s+(?:\d+: 0x\w+ M=(\d+) )?(.*?) \S*:-?\d+ s=", text, re.M):
        mapping = m.group(1) or mapping
        module_of.setdefault(m.group(2), mappings.get(mapping))

    def hue(fill):
        r, g, b = (int(c) / 255 for c in re.findall(r"\d+", fill)[:3])
        return round(colorsys.rgb_to_hls(r, g, b)[0] * 360)

    legend = dict(browser.evaluate("Array.from(document.querySelectorAll('#legend .swatch'))"
                                   ".map(function(s){return [s.nextSibling.textContent,"
                                   "getComputedStyle(s).backgroundColor];})"))
    drawn = browser.evaluate(FRAMES_DRAWN)
    fills = browser.evaluate("Array.from(document.querySelectorAll('#flame div[data-node]'))"
                             ".map(function(d){return getComputedStyle(d).backgroundColor;})")
    wrong, seen = [], {}
    for frame, fill in zip(drawn, fills):
        module = module_of.get(frame["name"])
        if frame["node"] == "0" or module is None:
            continue
        seen[frame["name"]] = fill
        if module not in legend or abs(hue(legend[module]) - hue(fill)) > 2:
            wrong.append(f"{frame['name']} ({module}) drawn {fill}, the legend: {legend.get(module)}")
    check(len(set(map(hue, legend.values()))) == len(legend) >= 3 and len(seen) >= 5 and not wrong,
          f"colours by module: {wrong}; the legend {legend}")
    choose(browser, "refine-kind", "ignore")
    browser.type_into("#refine-pattern", "shared")
    browser.click("#refine-add")
    after = browser.evaluate("Array.from(document.querySelectorAll('#flame div[data-node]'))"
                             ".map(function(d){return [d.textContent,getComputedStyle(d).backgroundColor];})")
    moved = [(n, f, seen[n]) for n, f in after if n in seen and f != seen[n]]
    check(not moved, f"colours changed with a refinement: {moved}")
    browser.click("#refinements button[data-undo]")
    print(f"{len(seen)} functions coloured by their module's hue, {len(legend)} modules in the legend")


@functools.lru_cache
def pprof_graph(profile, sample, *flags):
    """go tool pprof -dot's call graph (its defaults: nodefraction 0.005, edgefraction
    0.001, nodecount 80): {name: (flat, cum)} from each node's label and tooltip, and
    {(caller, callee): value} from its edges."""
    dot = go_pprof("-dot", "-unit=B", f"-sample_index={sample}", *flags, profile).stdout
    nodes, names, edges = {}, {}, {}
    for node in re.finditer(r'^N(\d+) \[label="((?:[^"\\]|\\.)*)".*?tooltip="((?:[^"\\]|\\.)*) \((-?\d+)B?\)"',
                            dot, re.M):
        # The label ends "flat (flat%)" and, where cum differs, "of cum (cum%)".
        lines = node.group(2).split("\\n")
        flat = lines[-2] if lines[-1].startswith("of ") else lines[-1]
        name = node.group(3).replace('\\"', '"')
        nodes[name] = (int(re.match(r"-?\d+", flat).group(0)), int(node.group(4)))
        names[node.group(1)] = name
    for edge in re.finditer(r'^N(\d+) -> N(\d+) \[label=" (-?\d+)', dot, re.M):
        edges[(names[edge.group(1)], names[edge.group(2)])] = int(edge.group(3))
    check(nodes and edges, f"no graph in go tool pprof -dot's output:\n{dot}")
    return nodes, edges


def check_graph(browser, profile, sample, what, *flags):
    """The Graph view's nodes, their flat and cum, are go tool pprof -dot's; its edges are
    among pprof's with pprof's values; each node is drawn once and no box covers another."""
    graph = browser.evaluate("window.heapkitReport.graph()")
    nodes = {n["name"]: (n["flat"], n["cum"]) for n in graph["nodes"]}
    edges = {(e["from"], e["to"]): e["value"] for e in graph["edges"]}
    pprof_nodes, pprof_edges = pprof_graph(profile, sample, *flags)
    check(nodes == pprof_nodes, f"{what}: the graph's nodes differ from go tool pprof -dot's:\n"
          f"ours only {sorted(set(nodes.items()) - set(pprof_nodes.items()))}\n"
          f"pprof's only {sorted(set(pprof_nodes.items()) - set(nodes.items()))}")
    wrong = {k: (v, pprof_edges.get(k)) for k, v in edges.items() if pprof_edges.get(k) != v}
    check(edges and not wrong, f"{what}: edges not pprof's: {wrong}")
    boxes = browser.evaluate("""Array.from(document.querySelectorAll('#graph g[data-function] rect')).map(function(r){
      var b=r.getBoundingClientRect();return [r.parentNode.dataset.function,b.left,b.top,b.right,b.bottom];})""")
    ids = [b[0] for b in boxes]
    check(len(ids) == len(nodes) == len(set(ids)), f"{what}: {len(ids)} boxes drawn for {len(nodes)} nodes")
    covered = [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
               if a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]]
    check(not covered, f"{what}: boxes overlap: {covered}")
    print(f"{what}: {len(nodes)} nodes, {len(edges)} of pprof's {len(pprof_edges)} edges, "
          f"as go tool pprof -dot ({'; '.join(graph['legend'][1:])})")


def same_figure(shown, told):
    """Equal as printed, or one unit of the last digit apart in the same unit: the page fits
    its window in JavaScript from the series' times, --growth in C++ from the window's own,
    so a figure on a rounding edge (323.625 kB) may print either way."""
    if shown == told:
        return True
    a = re.fullmatch(r"(-?\d+(?:\.(\d+))?)(\D*)", shown)
    b = re.fullmatch(r"(-?\d+(?:\.(\d+))?)(\D*)", told)
    if not a or not b or a.group(3) != b.group(3) or len(a.group(2) or "") != len(b.group(2) or ""):
        return False
    return abs(float(a.group(1)) - float(b.group(1))) <= 1.01 * 10 ** -len(a.group(2) or "")


def check_suspects(browser, dumps, what):
    """The suspects' growth, R^2, first and last are --growth's for `dumps`."""
    rows = {}
    for m in re.finditer(r"^\s+\d+\s+(\S+)\s+\S+\s+\S+\s+(\S+)\s+(\S+) -> (\S+)\s+(?:yes|no)\s+(.+)$",
                         heapfold("--growth", *dumps), re.M):
        rows[m.group(5)] = [m.group(1).lstrip("+"), m.group(2), m.group(3), m.group(4)]
    shown = browser.evaluate("Array.from(document.querySelectorAll('#suspects tbody tr')).map(function(tr)"
                             "{return Array.from(tr.cells).map(function(td){return td.textContent;});})")
    compared = [(c[5], c[1:5]) for c in shown if c[5] in rows]
    wrong = [(site, cells, rows[site]) for site, cells in compared
             if not all(same_figure(a, b)
                        for a, b in zip([cells[0].lstrip("+")] + cells[1:], rows[site]))]
    check(compared and not wrong, f"{what}: suspects {wrong or shown}, --growth says {rows}")
    print(f"{what}: {len(compared)} suspects' figures are --growth's")


opened = set()  # the pages' own URLs: the only requests allowed


def open_report(browser, page):
    opened.add(f"file://{page}")
    browser.open(f"file://{page}")
    browser.evaluate("window.heapkitReady.then(function(){return 1;})")  # data unpacked
    paint = browser.evaluate(
        "new Promise(function(done){var tries=0;(function look(){"
        "var p=performance.getEntriesByType('paint');"
        "if(p.length||++tries>100)done(p.length?p[p.length-1].startTime:-1);"
        "else setTimeout(look,20);})();})")
    print(f"{os.path.basename(page)}: {os.path.getsize(page)} bytes, first paint {paint:.0f} ms")


def go_to_address(browser, fragment):
    """The page's address changed to `fragment`, as a link within the page would."""
    browser.evaluate("new Promise(function(done){window.addEventListener('popstate',function(){"
                     f"setTimeout(done,0,1);}},{{once:true}});location.hash={json.dumps(fragment)};}})")


def check_clean(browser, page, what):
    errors = browser.errors()
    check(not errors, f"{what}: console errors {errors}")
    # data: URLs (the lifetime chart's image) are the page's own bytes, not requests.
    others = [url for url in browser.requests()
              if url not in opened and not url.startswith("data:")]
    check(not others, f"{what}: the page asked for {others}")


def check_top(browser, args, what):
    """Top's rows and total are --text's for the same input."""
    total, rows = text_table(*args)
    shown = {cells[-1]: (cells[0], cells[3]) for cells in page_rows(browser)}
    check(shown == rows, f"{what}: Top differs from --text:\n{shown}\n{rows}")
    check(text_of(browser, "total").split(": ", 1)[1].startswith(f"{total} total"),
          f"{what}: total {text_of(browser, 'total')!r}, --text says {total}")


def written_rows(html):
    """The rows of Top the writer drew in the page's HTML, ahead of its data, as cell texts."""
    body = re.search(r'<table id="top"><thead>.*?</thead><tbody>(.*?)</tbody>', html, re.S).group(1)
    return [[unescape(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr.*?</tr>", body, re.S)]


def row_boxes(browser):
    return browser.evaluate("Array.from(document.querySelectorAll('#top tbody tr')).slice(0,5)"
                            ".map(function(tr){var b=tr.getBoundingClientRect();"
                            "return [b.left,b.top,b.width,b.height];})")


def check_first_paint(browser, page, html, target):
    """Top's rows drawn ahead of the data are the rows the page draws once it has read it
    (which check_top holds to --text), in the same places; a click on one before then is
    shown, and applied once the data is read."""
    live, boxes = page_rows(browser), row_boxes(browser)
    written = written_rows(html)
    check(written == live and len(live) > 10, f"Top drawn ahead differs from Top drawn:\n{written}\n{live}")
    # The page as it stands before its data is read: the script that reads it left out.
    ahead = os.path.join(work, "ahead.html")
    with open(ahead, "w") as f:
        f.write(re.sub(r"<script>((?!<script>).)*</script>\s*</body>", "</body>", html, flags=re.S))
    opened.add(f"file://{ahead}")
    browser.open(f"file://{ahead}")
    check(page_rows(browser) == live and row_boxes(browser) == boxes,
          f"Top drawn ahead is not in the page's place: {row_boxes(browser)} against {boxes}")
    check(browser.evaluate("!document.getElementById('progress').hidden"), "no word that the data is read")
    browser.click(f'#top tbody tr[data-function="{target}"] td.name')
    check(browser.evaluate(f"document.querySelector('#top tr.sel').dataset.function") == str(target) and
          "once the data is read" in text_of(browser, "selected"),
          f"a click before the data is read is not shown: {text_of(browser, 'selected')!r}")
    # Such a click (made here before the page's script runs) selects its function once read.
    early = browser.send("Page.addScriptToEvaluateOnNewDocument", {"source": (
        "new MutationObserver(function(m,o){var t=document.querySelector('#top tbody tr');"
        f"if(t){{document.getElementById('top').dataset.pending='{target}';o.disconnect();}}}})"
        ".observe(document,{childList:true,subtree:true});")})
    open_report(browser, page)
    check(browser.evaluate("window.heapkitReport.state.selected") == target and
          browser.evaluate("document.getElementById('progress').hidden"),
          "a click before the data was read is not applied")
    browser.send("Page.removeScriptToEvaluateOnNewDocument", early)
    open_report(browser, page)


# 1. One dump of the C++ fixture, every sample type, select, search, refine.
dump = run_fixture(fixture("inline_cpp"), work, args=[fixture("libplugin_fixture.so")])
page = os.path.join(work, "report.html")
heapfold("--html", dump, "-o", page)
with open(page) as f:
    body = f.read()
check(not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", body),
      "the page refers to another file")
# Titled with the program's name and the dump's file name, not a path that may be gone.
title = re.search(r"<title>(.*?)</title>", body).group(1)
check(title == f"heapkit: inline_cpp ({os.path.basename(dump)})", f"the page's title: {title!r}")

TARGET = "geometry::build_grids()"
with Browser() as browser:
    open_report(browser, page)
    types = types_of(browser)
    check(types == ["inuse_space", "inuse_objects", "alloc_space", "alloc_objects"],
          f"sample types {types}")
    screenshot(browser, "top.png")
    # The numeric tables are copied out of the inflated data: a view into it would keep its
    # JSON's bytes (a million names' worth, already parsed) alive as long as the page.
    shared = browser.evaluate("(function(){var d=window.heapkitReport.data;return Object.keys(d)"
                              ".filter(function(k){return d[k]&&d[k].buffer&&"
                              "d[k].buffer.byteLength!==d[k].byteLength;});})()")
    check(shared == [], f"tables that are views into a larger buffer: {shared}")
    # Numbers are spelled as --text spells them, ties included: 1664 B is 1.625 kB,
    # "1.62kB" from fmt (the exact value, a tie to even) where toFixed says "1.63kB".
    amounts = [0, 1023, 1152, 1408, 1663, 1664, 1665, -1664, 5 * 2**20 + 2**17, 3 * 2**40 // 8]
    spelled = browser.evaluate(f"{json.dumps(amounts)}.map(window.heapkitReport.quantity)")
    check(spelled == [quantity(a) for a in amounts],
          f"amounts spelled {spelled}, --text's {[quantity(a) for a in amounts]}")
    for index, name in enumerate(types):
        choose(browser, "type", index)
        check_top(browser, [dump, "--sample", name], name)
    choose(browser, "type", 0)
    target_id = browser.evaluate(
        f"window.heapkitReport.nameId({json.dumps(TARGET)})")
    check_first_paint(browser, page, body, target_id)

    # A real click on a function in Top selects it in every view.
    browser.click(f'#top tbody tr[data-function="{target_id}"] td.name')
    check(text_of(browser, "selected") == f"Selected: {TARGET}",
          f"selected: {text_of(browser, 'selected')!r}")
    check(browser.evaluate("document.querySelector('#top tr.sel td.name').textContent") == TARGET,
          "the row is not marked")
    browser.click('#tabs button[data-view="flame"]')
    check_frames_true(browser, parse_folded(heapfold(dump)), "inline_cpp")
    pb = os.path.join(work, "report.pb.gz")  # the same dump as pprof, for its figures
    run([tool("jeprof2pprof"), dump, "-o", pb])
    check_module_colours(browser, pb)
    outlined = browser.evaluate("Array.from(document.querySelectorAll('#flame div.sel'))"
                                ".map(function(d){return d.textContent;})")
    check(outlined and set(outlined) == {TARGET}, f"flame graph selection: {outlined}")
    # Hovering an inlined frame: its file and line, marked inlined (DWARF's, as
    # --frame function+line spells the line).
    inlined = "geometry::Grid<double>::allocate(unsigned long)"
    node = browser.evaluate("Array.from(document.querySelectorAll('#flame div')).find(function(d)"
                            f"{{return d.textContent==={json.dumps(inlined)};}}).dataset.node")
    browser.hover(f'#flame div[data-node="{node}"]')
    tip = text_of(browser, "tooltip")
    where = f"../tests/fixtures/inline_cpp.cpp:{marker_line('inline_cpp.cpp', 'allocate')} (inlined)"
    check(tip.startswith(inlined + "\n") and where in tip.splitlines(), f"tooltip {tip!r}")
    screenshot(browser, "flame.png")
    # Drawn as a flame graph: the root ("all", node 0) at the bottom, below every frame,
    # and in the window; the selection still outlined.
    choose(browser, "orientation", "flame")
    tops = browser.evaluate("Array.from(document.querySelectorAll('#flame div')).map(function(d)"
                            "{return [d.dataset.node, d.getBoundingClientRect().top];})")
    root_top = dict(tops)["0"]
    check(all(top < root_top for node, top in tops if node != "0"),
          f"the flame graph's root is not at the bottom: {root_top} among {tops[:10]}")
    check(0 <= root_top < browser.evaluate("window.innerHeight"),
          f"the flame graph's root is not in the window: {root_top}")
    check(set(browser.evaluate("Array.from(document.querySelectorAll('#flame div.sel'))"
                               ".map(function(d){return d.textContent;})")) == {TARGET},
          "the selection is lost in the flame graph")
    screenshot(browser, "flame-root-below.png")
    choose(browser, "orientation", "icicle")
    browser.click('#tabs button[data-view="peek"]')
    # The Peek list is go tool pprof -peek's on jeprof2pprof's profile of the same dump:
    # the callers, the function's flat and cum, the callees, what passes over each call;
    # a caller's row selects it, and a callee's row of that the first function again.
    for name, row, samples in ((TARGET, None, ((0, "inuse_space"), (1, "inuse_objects"))),
                               ("main", "tr.caller", ((0, "inuse_space"),)),
                               (TARGET, "tr.callee", ())):
        if row:
            id_of = browser.evaluate(f"window.heapkitReport.nameId({json.dumps(name)})")
            browser.click(f'#peek {row}[data-function="{id_of}"] td.name')
            check(text_of(browser, "peek-title") == f"Callers and callees of {name}",
                  f"a click on {name}'s row: {text_of(browser, 'peek-title')!r}")
        for index, sample in samples:
            choose(browser, "type", index)
            shown, expected = peek_list(browser), pprof_peek(pb, name, sample)
            spell = quantity if sample.endswith("space") else str
            expected = {k: [(r[0], *map(spell, r[1:])) for r in rows] for k, rows in expected.items()}
            check(shown == expected, f"{name}'s Peek list ({sample}):\n{shown}\n"
                  f"go tool pprof -peek says\n{expected}")
        choose(browser, "type", 0)
    print(f"Peek of {TARGET} and main: go tool pprof -peek's callers, callees and values")
    screenshot(browser, "peek-list.png")
    # The trees, a click away; each frame tells its name, value and lines when hovered.
    browser.click("#peek-trees summary")
    browser.evaluate("new Promise(function(done){setTimeout(done,0,1);})")  # the toggle event
    check(text_of(browser, "callers-title").startswith(f"Callers of {TARGET}") and
          browser.evaluate("document.querySelector('#callers div').textContent") == TARGET,
          f"peek: {text_of(browser, 'callers-title')!r}")
    node = browser.evaluate("Array.from(document.querySelectorAll('#callers div')).find(function(d)"
                            "{return d.textContent==='main';}).dataset.node")
    browser.hover(f'#callers div[data-node="{node}"]')
    tip = text_of(browser, "tooltip")
    check(tip.startswith("main\n") and "inline_cpp.cpp:" in tip, f"a caller's tooltip {tip!r}")
    callees = browser.evaluate("Array.from(document.querySelectorAll('#callees div'))"
                               ".map(function(d){return d.textContent;})")
    check("geometry::Grid<double>::allocate(unsigned long)" in callees, f"callees {callees}")
    callers = browser.evaluate("Array.from(document.querySelectorAll('#callers div'))"
                               ".map(function(d){return d.textContent;})")
    check(callers[:2] == [TARGET, "main"], f"callers {callers}")
    screenshot(browser, "peek.png")
    browser.click('#tabs button[data-view="source"]')
    # The fixture's own source, read where the report was written: the line that calls
    # allocate() carries build_grids' cum, and shows the file's text.
    files = browser.evaluate("Array.from(document.querySelectorAll('#source h3'))"
                             ".map(function(h){return h.textContent;})")
    check(files == ["../tests/fixtures/inline_cpp.cpp"], f"source files of {TARGET}: {files}")
    line = marker_line("inline_cpp.cpp", "build_grids")
    with open(os.path.join(SOURCE_DIR, "fixtures", "inline_cpp.cpp")) as f:
        code = f.read().splitlines()[line - 1]
    cells = browser.evaluate(f"Array.from(document.querySelectorAll('#source tr[data-line=\"{line}\"] td'))"
                             ".map(function(td){return td.textContent;})")
    at_line = f"{TARGET} (inline_cpp.cpp:{line})"
    through = sum(v for stack, v in parse_folded(heapfold("--frame", "function+line", dump)).items()
                  if at_line in stack.split(";"))
    check(through > 0 and cells == ["0B", quantity(through), str(line), code],
          f"line {line} of inline_cpp.cpp: {cells}; expected {quantity(through)} and {code!r}")
    screenshot(browser, "source.png")
    fonts = browser.evaluate("Array.from(document.querySelectorAll('table.source td'))"
                             ".map(function(td){return getComputedStyle(td).fontFamily;})")
    check(fonts and all(f == "monospace" for f in fonts), f"Source is not monospace: {set(fonts)}")

    # Search: the share of the stacks through a match, from the folded stacks.
    stacks = parse_folded(heapfold(dump))
    whole = sum(stacks.values())
    part = sum(v for s, v in stacks.items() if any("Grid" in f for f in s.split(";")))
    browser.click('#tabs button[data-view="flame"]')
    browser.click("#crumbs a")  # back to the root
    # Typed as a person types, the search is drawn once the keys pause: once, not per key.
    drawn = browser.evaluate(
        "(async function(){var r=window.heapkitReport,i=document.getElementById('search');"
        "var before=r.renders();for(const v of ['G','Gr','Gri','Grid']){i.value=v;"
        "i.dispatchEvent(new Event('input'));}var keys=r.renders()-before;"
        "await r.settled();return [keys,r.renders()-before];})()")
    check(drawn == [0, 1], f"the search drew {drawn[0]} times as 4 keys came, {drawn[1]} in all")
    search_for(browser, "Grid")
    expected = f"Matched: {100 * part / whole:.1f}% ({quantity(part)})"
    check(text_of(browser, "matched") == expected,
          f"search: {text_of(browser, 'matched')!r}, expected {expected!r}")
    lit = browser.evaluate("Array.from(document.querySelectorAll('#flame div.match'))"
                           ".map(function(d){return d.textContent;})")
    check(lit and all("Grid" in name for name in lit), f"highlighted {lit}")
    screenshot(browser, "search.png")
    search_for(browser, "")

    # Refine: focus as --focus does, shown, then undone.
    browser.click('#tabs button[data-view="top"]')
    choose(browser, "refine-kind", "focus")
    browser.type_into("#refine-pattern", "plugin")
    browser.click("#refine-add")
    check(text_of(browser, "refinements").startswith("focus=plugin"),
          f"refinements shown: {text_of(browser, 'refinements')!r}")
    check_top(browser, [dump, "--focus", "plugin"], "focus=plugin")
    browser.click("#refinements button[data-undo]")
    check_top(browser, [dump], "undone")
    choose(browser, "refine-kind", "hide")
    browser.type_into("#refine-pattern", "^main$")
    browser.click("#refine-add")
    check_top(browser, [dump, "--hide", "^main$"], "hide=^main$")
    browser.click("#refinements button[data-undo]")
    for kind, flag, pattern in (("drop", "--drop-frames", "geometry::build_grids"),
                                ("ignore", "--ignore", "shared_")):
        choose(browser, "refine-kind", kind)
        browser.type_into("#refine-pattern", pattern)
        browser.click("#refine-add")
        check_top(browser, [dump, flag, pattern], f"{kind}={pattern}")
        browser.click("#refinements button[data-undo]")

    # The state is in the address: a view, a refinement, a search and a zoom come back on
    # a reload, and Back returns to the state before the zoom.
    browser.click('#tabs button[data-view="flame"]')
    choose(browser, "refine-kind", "ignore")
    browser.type_into("#refine-pattern", "plugin")
    browser.click("#refine-add")
    search_for(browser, "Grid")
    unzoomed = shown_state(browser)
    node = browser.evaluate("Array.from(document.querySelectorAll('#flame div')).find(function(d)"
                            f"{{return d.textContent==={json.dumps(TARGET)};}}).dataset.node")
    browser.click(f'#flame div[data-node="{node}"]')
    zoomed = shown_state(browser)
    check(zoomed["crumbs"].endswith(TARGET) and zoomed["refinements"].startswith("ignore=plugin")
          and zoomed["search"] == "Grid" and zoomed["view"] == "Flame Graph",
          f"the state before the reload: {zoomed}")
    browser.send("Page.reload")
    browser.wait_for("Page.loadEventFired")
    browser.evaluate("window.heapkitReady.then(function(){return 1;})")
    check(shown_state(browser) == zoomed,
          f"after a reload {shown_state(browser)},\nbefore it {zoomed} ({browser.evaluate('location.hash')})")
    browser.evaluate("new Promise(function(done){window.addEventListener('popstate',function(){"
                     "setTimeout(done,0,1);},{once:true});history.back();})")
    check(shown_state(browser) == unzoomed,
          f"after Back {shown_state(browser)},\nbefore the zoom {unzoomed}")
    print(f"the state in the address: {browser.evaluate('location.hash')}")

    # The call graph: go tool pprof -dot's nodes and edges, reached by its tab; a click on
    # a box selects its function (Peek follows), and a reload comes back to it.
    go_to_address(browser, "")
    browser.click('#tabs button[data-view="graph"]')
    check_graph(browser, pb, "inuse_space", "inline_cpp")
    # An edge tells its calls and value when hovered: pprof's.
    _, pprof_edges = pprof_graph(pb, "inuse_space")
    tip = browser.evaluate("""(function(){var p=document.querySelector('#graph g[data-edge] path');
      p.dispatchEvent(new MouseEvent('mousemove',{bubbles:true,clientX:10,clientY:10}));
      return document.getElementById('tooltip').textContent;})()""").split("\n")
    caller, callee = tip[0].split(" \u2192 ")
    check(tip[1].startswith(quantity(pprof_edges[(caller, callee)]) + " ("), f"an edge's tooltip {tip}")
    browser.click(f'#graph g[data-function="{target_id}"] rect')
    check(text_of(browser, "selected") == f"Selected: {TARGET}",
          f"a click on {TARGET}'s box: {text_of(browser, 'selected')!r}")
    screenshot(browser, "graph.png")
    browser.send("Page.reload")
    browser.wait_for("Page.loadEventFired")
    browser.evaluate("window.heapkitReady.then(function(){return 1;})")
    check(browser.evaluate("document.querySelector('#tabs button.active').textContent") == "Graph" and
          browser.evaluate(f"document.querySelector('#graph g[data-function=\"{target_id}\"] rect')"
                           ".getAttribute('stroke')") == "#000",
          f"the graph and its selection after a reload ({browser.evaluate('location.hash')})")
    browser.click('#tabs button[data-view="peek"]')
    check(text_of(browser, "peek-title") == f"Callers and callees of {TARGET}",
          f"Peek after the graph's click: {text_of(browser, 'peek-title')!r}")
    check_clean(browser, page, "one dump")

    # Filters given to heapfold are applied before and listed; names are text, never markup
    # (a dump named like an element stays a name).
    odd = os.path.join(work, "<img src=x onerror=alert(1)>.heap")
    shutil.copy(dump, odd)
    focused = os.path.join(work, "focused.html")
    heapfold("--html", "--focus", "plugin", odd, "-o", focused)
    open_report(browser, focused)
    check_top(browser, [dump, "--focus", "plugin"], "--focus=plugin")
    check(text_of(browser, "refinements") == "--focus=plugin", "the applied filter is not shown")
    check(browser.evaluate("document.querySelectorAll('img:not(#lifetime-chart)').length") == 0 and
          browser.evaluate("document.title") ==
          f"heapkit: inline_cpp ({os.path.basename(odd)})",
          f"the dump's name became markup: {browser.evaluate('document.title')!r}")
    check_clean(browser, focused, "a name like markup")

    # 3000 stacks of one object each under one caller: each 0.4 px wide, together the
    # graph's width, drawn as one merged block and counted under the graph.
    thin = os.path.join(work, "thin.html")
    thin_dump = write_synthetic_dump(os.path.join(work, "thin.heap"), 3000)
    heapfold("--html", thin_dump, "-o", thin)
    open_report(browser, thin)
    browser.click('#tabs button[data-view="flame"]')
    check_frames_true(browser, parse_folded(heapfold(thin_dump)), "3000 thin stacks")
    check(browser.evaluate("document.querySelectorAll('#flame div.merged').length") == 1,
          "3000 thin stacks: no merged block")
    screenshot(browser, "flame-merged.png")
    # The block opened lists what it stands for, the largest first (here all alike: by
    # name), and a name zooms to its frame, drawn the graph's width.
    thin_stacks = parse_folded(heapfold(thin_dump))
    callees = sorted({stack.split(";")[2] for stack in thin_stacks})
    check(len(callees) == 3000 and len(set(thin_stacks.values())) == 1,
          f"the thin dump: {len(callees)} third frames, values {set(thin_stacks.values())}")
    each = next(iter(thin_stacks.values()))
    share = f"{100 * each / sum(thin_stacks.values()):.2f}%"
    browser.click("#flame div.merged")
    listed = browser.evaluate("Array.from(document.querySelectorAll('#flame-merged li'))"
                              ".map(function(li){return li.textContent;})")
    heading = text_of(browser, "flame-merged")
    screenshot(browser, "flame-merged-open.png")
    check(heading.startswith(f"3000 frames called by {thin_stacks and next(iter(thin_stacks)).split(';')[1]}, "
                             "each narrower than a pixel") and
          listed == [f"{name} {quantity(each)} ({share})" for name in callees[:100]],
          f"the merged block opened: {heading[:120]!r}, {listed[:3]}")
    browser.click("#flame-merged li:nth-child(2) a")
    zoomed = browser.evaluate("Array.from(document.querySelectorAll('#crumbs a'))"
                              ".map(function(a){return a.textContent;})")
    drawn = browser.evaluate("(function(){var z=document.querySelectorAll('#flame div:not(.dim)')[0];"
                             "return [z.textContent, z.getBoundingClientRect().width,"
                             "document.getElementById('flame').clientWidth];})()")
    check(zoomed[-1] == callees[1] and drawn[0].startswith(callees[1][:8]) and
          abs(drawn[1] - drawn[2]) < 1 and browser.evaluate("document.getElementById('flame-merged').hidden"),
          f"a listed frame's link: crumbs {zoomed}, drawn {drawn}")
    # Their caller's Peek: the heaviest 100 callees (here all alike: by name), then a row
    # that draws the others. (One thin frame is the caller itself: what it calls counts.)
    caller = next(iter(thin_stacks)).split(";")[1]
    calls = {}
    for stack, value in thin_stacks.items():
        frames = stack.split(";")
        for callee in {b for a, b in zip(frames, frames[1:]) if a == caller and b != caller}:
            calls[callee] = calls.get(callee, 0) + value
    callees = sorted(calls, key=lambda name: (-calls[name], name))
    rest = sum(calls[name] for name in callees[100:])
    caller_id = browser.evaluate(f"window.heapkitReport.nameId({json.dumps(caller)})")
    browser.click('#tabs button[data-view="top"]')
    browser.click(f'#top tbody tr[data-function="{caller_id}"] td.name')
    browser.click('#tabs button[data-view="peek"]')
    rows = "Array.from(document.querySelectorAll('#peek tr.callee td.name')).map(function(d){return d.textContent;})"
    more = "document.querySelector('#peek button[data-more]')"
    check(browser.evaluate(rows) == ["\u2193 " + name for name in callees[:100]] and
          browser.evaluate(more + ".textContent") ==
          f"Show the other {len(callees) - 100} callees (calls: {quantity(rest)})",
          f"{caller}'s Peek: {browser.evaluate(rows)[:3]}..., {browser.evaluate(more + '.textContent')!r}")
    browser.click("#peek button[data-more]")
    check(browser.evaluate(rows) == ["\u2193 " + name for name in callees] and
          not browser.evaluate(more), f"{caller}'s Peek, all shown: {len(browser.evaluate(rows))} rows")
    # Hidden frames' callees merged with their caller's own (report_refine.js) as --hide
    # merges them: the caller hidden, its callees and (through its call of itself) the
    # leaf sorted together below the root; every app frame hidden, the 3000 leaves one.
    browser.click('#tabs button[data-view="flame"]')
    browser.click("#crumbs a")  # "all": the graph at its root
    for pattern in (r"^app\+0x1fff$", "^app"):
        choose(browser, "refine-kind", "hide")
        browser.type_into("#refine-pattern", pattern)
        browser.click("#refine-add")
        check_frames_true(browser, parse_folded(heapfold("--hide", pattern, thin_dump)),
                          f"3000 thin stacks, {pattern} hidden")
        browser.click("#refinements button[data-undo]")
    check_clean(browser, thin, "thin stacks")

    # CPython's start (Debian's, its own names): more functions than pprof's 80 nodes,
    # so the graph is pprof's cut by nodefraction, by the entropy of its calls and by
    # edgefraction; with frames hidden (of another sample type), its edges over them are
    # pprof's too.
    if os.path.exists("/usr/bin/python3"):
        python_dir = os.path.join(work, "python")
        os.makedirs(python_dir)
        run(["/usr/bin/python3", "-c", "import decimal, json, re; json.dumps({'a': [1] * 100})"],
            env=dict(os.environ, LD_PRELOAD=JEMALLOC_SO,
                     MALLOC_CONF=f"{PROFILE_CONF},prof_prefix:{python_dir}/jeprof"))
        (python_dump,) = glob.glob(f"{python_dir}/jeprof.*.heap")
        python_page, python_pb = os.path.join(work, "python.html"), os.path.join(work, "python.pb.gz")
        heapfold("--html", python_dump, "-o", python_page)
        run([tool("jeprof2pprof"), "-q", python_dump, "-o", python_pb])
        open_report(browser, python_page)
        go_to_address(browser, "#view=graph")
        check_graph(browser, python_pb, "inuse_space", "CPython")
        screenshot(browser, "graph-cpython.png")
        choose(browser, "type", 3)
        choose(browser, "refine-kind", "hide")
        browser.type_into("#refine-pattern", "^_?PyObject_")
        browser.click("#refine-add")
        check_graph(browser, python_pb, "alloc_objects", "CPython, PyObject_ hidden", "-hide=^_?PyObject_")
        check(any(e["residual"] for e in browser.evaluate("window.heapkitReport.graph().edges")),
              "CPython, PyObject_ hidden: no edge over a dropped function")
        check_clean(browser, python_page, "CPython's graph")

    # Names that fit, C++ (scopes.cpp: namespaces, an anonymous one, templates, a return
    # type) and Rust: each name's forms are pprof's.
    cxx_dir = os.path.join(work, "scopes")
    os.makedirs(cxx_dir)
    cxx_dump = run_fixture(fixture("scopes_cpp"), cxx_dir)
    profiles = [("C++", cxx_dump, True)]
    if shutil.which("rustc"):
        rust_dir = os.path.join(work, "rust")
        os.makedirs(rust_dir)
        rust = os.path.join(rust_dir, "rust_fixture")
        run(["rustc", "-g", "-C", "opt-level=1", "-o", rust,
             os.path.join(SOURCE_DIR, "fixtures", "rust_fixture.rs")])
        profiles.append(("Rust", run_fixture(rust, rust_dir), False))
    else:
        print("the Rust names left out: no rustc")
    for language, named_dump, cxx in profiles:
        named_page = os.path.join(work, f"names-{language}.html")
        heapfold("--html", named_dump, "-o", named_page)
        named_pb = os.path.join(work, f"names-{language}.pb.gz")
        run([tool("jeprof2pprof"), named_dump, "-o", named_pb])
        open_report(browser, named_page)
        check_short_names(browser, named_pb, language, cxx)
        browser.click('#tabs button[data-view="flame"]')
        check_labels_fit(browser, language)
        screenshot(browser, f"names-{language}.png")
        check_clean(browser, named_page, f"{language} names")
    # alloc_cpp.cpp's standard library: operators, templates, return types (its names
    # shortened by the page open, whichever it is).
    alloc_dir = os.path.join(work, "alloc_cpp")
    os.makedirs(alloc_dir)
    alloc_pb = os.path.join(work, "alloc_cpp.pb.gz")
    run([tool("jeprof2pprof"), run_fixture(fixture("alloc_cpp"), alloc_dir), "-o", alloc_pb])
    check_short_names(browser, alloc_pb, "C++ (alloc_cpp)", True)
    # Operators, as go tool pprof -raw -symbolize=remote:demangle=templates printed them on
    # a dump of alloc_cpp's code that reaches its standard library's operators (bench/
    # gen_dump.py --like): their symbols are no brackets, "+<" no operator.
    string = "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >"
    operators = {
        f"{string} std::operator+<char, std::char_traits<char>, std::allocator<char> >"
        f"(char const*, {string}&&)": "std::operator+<char, std::char_traits<char>, std::allocator<char> >",
        "decltype ((__char_traits_cmp_cat<std::char_traits<char> >)(0)) std::operator<=><char, "
        f"std::char_traits<char>, std::allocator<char> >({string} const&, {string} const&)":
        "std::operator<=><char, std::char_traits<char>, std::allocator<char> >",
        f"{string}::operator+=(char const*)": f"{string}::operator+=",
        "std::default_delete<store::Block>::operator()(store::Block*) const":
        "std::default_delete<store::Block>::operator()"}
    ours = browser.evaluate(f"{json.dumps(list(operators))}.map(function(n)"
                            "{return window.heapkitReport.nameForms(n).noParameters;})")
    check(ours == list(operators.values()), f"operators without parameters: {ours}")

# Threads (--threads): the selector keeps one thread's stacks, as the folded stacks that
# start with its frame add up.
threads_dir = os.path.join(work, "threads")
os.makedirs(threads_dir)
threads_dump = run_fixture(fixture("threads"), threads_dir, preload=False)
threads_page = os.path.join(work, "threads.html")
heapfold("--html", "--threads", threads_dump, "-o", threads_page)
thread_stacks = parse_folded(heapfold("--threads", threads_dump))
per_thread = {}
for stack, value in thread_stacks.items():
    per_thread[stack.split(";")[0]] = per_thread.get(stack.split(";")[0], 0) + value
with Browser() as browser:
    open_report(browser, threads_page)
    names = browser.evaluate("Array.from(document.querySelectorAll('#thread option'))"
                             ".slice(1).map(function(o){return o.textContent;})")
    check(sorted(names) == sorted(per_thread), f"threads {names}, folded has {list(per_thread)}")
    for name in ("alpha worker", "beta"):
        value = browser.evaluate("Array.from(document.querySelectorAll('#thread option'))"
                                 f".find(function(o){{return o.textContent==={json.dumps(name)};}})"
                                 ".value")
        choose(browser, "thread", value)
        check(text_of(browser, "total") == f"inuse_space: {quantity(per_thread[name])} total",
              f"thread {name}: {text_of(browser, 'total')!r}, folded says {per_thread[name]}")
    # A thread and a focus at once: beta's stacks through a "_work" frame (alpha's
    # alpha_work matches too, and is left out).
    focused = sum_where(thread_stacks,
                        lambda frames: frames[0] == "beta" and any("_work" in f for f in frames))
    check(focused > 0, "beta's stacks have no _work frame: the fixture was built otherwise")
    choose(browser, "refine-kind", "focus")
    browser.type_into("#refine-pattern", "_work")
    browser.click("#refine-add")
    browser.evaluate("window.heapkitReport.settled().then(function(){return 1;})")
    check(text_of(browser, "total") == f"inuse_space: {quantity(focused)} total",
          f"beta, focus=_work: {text_of(browser, 'total')!r}, folded says {focused}")
    browser.click("#refinements button[data-undo]")
    screenshot(browser, "threads.png")
    check_clean(browser, threads_page, "threads")

# An allocation log with its dump: the log's sample types, their totals as the folded
# stacks add up, and the Lifetimes tab with --text's table (a site selects its function)
# and --lifetimes' chart.
log_dir = os.path.join(work, "log")
os.makedirs(log_dir)
run([fixture("churn")], env=dict(os.environ, MALLOC_CONF=(
    "prof:true,prof_log:true,prof_time_resolution:high,lg_prof_sample:0,prof_final:true,"
    f"prof_prefix:{log_dir}/jeprof")))
(log_path,) = glob.glob(f"{log_dir}/jeprof.*.json")
(log_dump,) = glob.glob(f"{log_dir}/jeprof.*.heap")
log_page = os.path.join(work, "log.html")
heapfold("--html", log_path, log_dump, "-o", log_page)
with Browser() as browser:
    open_report(browser, log_page)
    types = types_of(browser)
    check(types[0] == "alloc_space" and "temporary_space" in types and "byte_seconds" in types,
          f"a log's types: {types}")
    for name in ("alloc_space", "temporary_space", "cross_thread_objects"):
        choose(browser, "type", types.index(name))
        total = sum(parse_folded(heapfold("--sample", name, log_path, log_dump)).values())
        shown = text_of(browser, "total")
        check(shown == f"{name}: {quantity(total) if name.endswith('space') else total} total",
              f"{name}: {shown!r}, the folded stacks add up to {total}")
    choose(browser, "type", 0)
    browser.click('#tabs button[data-view="lifetimes"]')
    table = browser.evaluate("Array.from(document.querySelectorAll('#log-table pre'))"
                             ".map(function(p){return p.textContent;})")
    check(table == heapfold("--text", log_path, log_dump).splitlines(),
          f"the Lifetimes table is not --text's: {table}")
    check(browser.evaluate("document.getElementById('lifetime-chart').naturalWidth") == 1200,
          "the lifetime chart did not load")
    screenshot(browser, "lifetimes.png")
    browser.click('#log-table pre[data-site="cross_site"]')
    check(text_of(browser, "selected") == "Selected: cross_site",
          f"a site's row selects: {text_of(browser, 'selected')!r}")
    check_clean(browser, log_page, "allocation log")

# 2. A change: leaky run 10 and 30 times.


def run_leaky(iterations, name, conf=""):
    directory = os.path.join(work, name)
    os.makedirs(directory)
    env = dict(os.environ, LD_PRELOAD=JEMALLOC_SO,
               MALLOC_CONF=f"{PROFILE_CONF}{conf},prof_prefix:{directory}/jeprof")
    run([fixture("leaky"), *iterations], env=env)
    return sorted(glob.glob(f"{directory}/jeprof.*.heap"))


(before,) = run_leaky(["10"], "before")
(after,) = run_leaky(["30"], "after")
diff_page = os.path.join(work, "change.html")
heapfold("--html", "--base", before, after, "-o", diff_page)
with Browser() as browser:
    open_report(browser, diff_page)
    total, rows = text_table("--base", before, after)
    shown = {cells[-1]: (cells[2].lstrip("+"), cells[5].lstrip("+")) for cells in page_rows(browser)}
    check(shown == rows, f"change: Top differs from --text --base:\n{shown}\n{rows}")
    base_total, _ = text_table(before)
    new_total, _ = text_table(after)
    check(text_of(browser, "total") ==
          f"inuse_space: base {base_total}, new {new_total} (change +{total})",
          f"change totals: {text_of(browser, 'total')!r}")
    legend = text_of(browser, "legend")
    check("grew (new > base)" in legend and "shrank (new < base)" in legend, f"legend {legend!r}")
    screenshot(browser, "change-top.png")
    browser.click('#tabs button[data-view="flame"]')
    fills = browser.evaluate("Array.from(document.querySelectorAll('#flame div')).map(function(d)"
                             "{return [d.textContent, getComputedStyle(d).backgroundColor];})")
    colour = {name: tuple(map(int, re.findall(r"\d+", fill)[:3])) for name, fill in fills}
    red, grey = colour["leak_steadily"], colour["fill_cache"]
    check(red[0] == 255 and red[1] < 100 and red[2] < 100, f"leak_steadily grew: {red}")
    check(grey[0] == grey[1] == grey[2], f"fill_cache is unchanged: {grey}")
    screenshot(browser, "change-flame.png")
    # The call graph's boxes too: red where the new cum is larger, grey where it is not.
    browser.click('#tabs button[data-view="graph"]')
    fills = browser.evaluate("Array.from(document.querySelectorAll('#graph g[data-function]')).map(function(g)"
                             "{return [window.heapkitReport.name(+g.dataset.function),"
                             "g.querySelector('rect').getAttribute('fill')];})")
    colour = {name: tuple(map(int, re.findall(r"\d+", fill)[:3])) for name, fill in fills}
    check(colour["leak_steadily"][0] == 255 and colour["leak_steadily"][2] < 100 and
          len(set(colour["fill_cache"])) == 1, f"the change's graph: {colour}")
    check_clean(browser, diff_page, "change")

# Two dumps merged with --label-dumps: a root frame per dump, as --text counts them.
labelled_page = os.path.join(work, "labelled.html")
heapfold("--html", "--label-dumps", before, after, "-o", labelled_page)
with Browser() as browser:
    open_report(browser, labelled_page)
    check_top(browser, ["--label-dumps", before, after], "--label-dumps")
    check_clean(browser, labelled_page, "--label-dumps")

# 3. A series: leaky with a dump each MiB allocated, 20 ms between iterations.
series = run_leaky(["12", "20"], "series", ",lg_prof_interval:20")
check(len(series) >= 6, f"{len(series)} dumps")
series_page = os.path.join(work, "series.html")
heapfold("--html", "--growth", *series, "-o", series_page)
with Browser() as browser:
    open_report(browser, series_page)
    order = browser.evaluate("window.heapkitReport.data.sources")
    last = len(order) - 1
    first_total, _ = text_table(order[0])
    last_total, last_rows = text_table(order[-1])
    check(text_of(browser, "total").startswith(
          f"inuse_space: base {first_total}, new {last_total} "),
          f"the whole window: {text_of(browser, 'total')!r}")
    # The suspects are --growth's, in its order.
    sites = browser.evaluate("Array.from(document.querySelectorAll('#suspects tbody td.name'))"
                             ".map(function(td){return td.textContent;})")
    ranked = [m.group(1) for m in re.finditer(r"^\s+\d+ .* (?:yes|no)\s+(.+)$",
                                              heapfold("--growth", *series), re.M)]
    check(sites == ranked and any(s.startswith("leak_steadily (leaky.c:") for s in sites),
          f"suspects {sites}, --growth ranks {ranked}")
    leak = sites.index(next(s for s in sites if s.startswith("leak_steadily")))
    screenshot(browser, "series.png")
    # Over the whole window churn_scratch's scratch buffer is gone (its dumps' values fall
    # to 0): by the new values it has no width, by the base's it is drawn, blue.
    browser.click('#tabs button[data-view="flame"]')
    drawn = browser.evaluate("Array.from(document.querySelectorAll('#flame div'))"
                             ".map(function(d){return d.textContent;})")
    check("churn_scratch" not in drawn, f"a frame of no new value is drawn: {drawn}")
    choose(browser, "side", "base")
    fills = browser.evaluate("Array.from(document.querySelectorAll('#flame div')).map(function(d)"
                             "{return [d.textContent, getComputedStyle(d).backgroundColor];})")
    colour = {name: tuple(map(int, re.findall(r"\d+", fill)[:3])) for name, fill in fills}
    # Red and blue, as the SVG (not red and green, which colour-blind readers confuse).
    blue = colour.get("churn_scratch")
    check(blue and blue[2] == 255 and blue[0] < 100 and blue[1] < 100,
          f"churn_scratch shrank, not drawn blue: {blue}")
    check(browser.evaluate("document.querySelector('#flame div').getBoundingClientRect().top") <
          browser.evaluate("window.innerHeight"), "the root is not in the first screen")
    screenshot(browser, "series-base-widths.png")
    choose(browser, "side", "new")
    browser.click(f'#suspects tbody tr[data-suspect="{leak}"]')
    crumbs = text_of(browser, "crumbs")
    check(crumbs.endswith("leak_steadily"), f"the suspect's stack: {crumbs!r}")
    screenshot(browser, "series-flame.png")
    # The chart's axes: amounts up to the peak of the dumps' totals (--text's), times along.
    peak = quantity(max(sum(parse_folded(heapfold(d)).values()) for d in order))
    ticks = browser.evaluate("Array.from(document.querySelectorAll('#chart text.tick.y'))"
                             ".map(function(t){return t.textContent;})")
    names = browser.evaluate("Array.from(document.querySelectorAll('#chart text.axis-label'))"
                             ".map(function(t){return t.textContent;})")
    check(ticks[0] == "0B" and ticks[-1] == peak and len(names) == 2 and "inuse_space" in names,
          f"the chart's axes: ticks {ticks}, names {names}; the dumps' peak is {peak}")
    # The suspects' figures follow the window: those of --growth given the window's dumps.
    for start in (0, last // 3):
        choose(browser, "from", start)
        check_suspects(browser, order[start:], f"window from dump {start + 1}")
    choose(browser, "from", 0)
    # The window on the last dump alone: its own profile, as --text gives it.
    choose(browser, "from", last)
    browser.click('#tabs button[data-view="top"]')
    check_top(browser, [order[-1]], "window on the last dump")
    check_clean(browser, series_page, "series")

if shots != work:
    shutil.copy(page, shots)
print("ok")
