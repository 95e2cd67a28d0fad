# SPDX-License-Identifier: MIT
"""--growth on real prof_interval series of the leaky fixture (one run, and two runs with
ASLR on): leak_steadily ranks first, above the cache that fills and stays flat and the
buffer that grows and is freed; the table's slopes and R^2 are those Python's statistics
module fits to each dump's own stacks; go tool pprof -sample_index=growth lists the leak
first; the chart and the flame graph coloured by growth render in headless Chromium;
bad series are refused with messages that name the problem."""

import glob
import os
import re
import statistics

from heapkit_e2e import (JEMALLOC_SO, PROFILE_CONF, check, chromium, chromium_browser, fixture,
                         flame_frames, go_pprof, heapfold, html_data, marker_line, png_colours,
                         pprof_raw, rgb, run, run_fixture, run_harness, tool, workdir, write_file)

work = workdir()
program = fixture("leaky")
# prof_interval: a dump each time 2^20 bytes more were allocated, about one an iteration.
SERIES_CONF = f"{PROFILE_CONF},lg_prof_interval:20"
LEAK_SITE = f"leak_steadily (leaky.c:{marker_line('leaky.c', 'leak')})"


def leaky_series(iterations, name, *args):
    """Runs leaky with a pause of 20 ms an iteration (distinct file times) and returns its
    dumps, prof_interval's and the final one."""
    directory = os.path.join(work, name)
    os.makedirs(directory)
    env = dict(os.environ, LD_PRELOAD=JEMALLOC_SO,
               MALLOC_CONF=f"{SERIES_CONF},prof_prefix:{directory}/jeprof")
    run([program, str(iterations), "20", *args], env=env)
    dumps = glob.glob(f"{directory}/jeprof.*.heap")
    check(len(dumps) >= 10 and any(".i" in d for d in dumps),
          f"{iterations} iterations left {len(dumps)} dumps: {dumps}")
    return dumps


ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([\d.]+)\s+(\S+) -> (\S+)\s+(yes|no)\s+(.+)$")
UNITS = {"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}


def amount(text):
    """go tool pprof's spelling, "371.42kB" or "-4.5B", as a number of bytes."""
    match = re.fullmatch(r"(-?[\d.]+)(B|kB|MB|GB)", text)
    check(match, f"not a quantity: {text!r}")
    return float(match.group(1)) * UNITS[match.group(2)]


LEFT_OUT = re.compile(r"^(\d+) stacks? that do(es)? not grow left out; ")
STEPS = re.compile(r"^(\d+) stacks? that grew and then stopped \(steps\) left out; ")


def growth_table(text):
    """(header, rows): each row a dict of the table's columns and the stack under it."""
    lines = text.splitlines()
    rows = []
    for line in lines[2:]:
        if LEFT_OUT.match(line) or STEPS.match(line) or line.startswith("note: "):
            continue  # the lines under the table: steps, what does not grow, notes
        if line.strip().startswith("stack: "):
            rows[-1]["stack"] = line.strip()[len("stack: "):]
            continue
        match = ROW.match(line)
        check(match, f"not a row of the table: {line!r}\n{text}")
        keys = ("rank", "growth", "slope_s", "slope_dump", "r2", "first", "last", "mono", "site")
        rows.append(dict(zip(keys, match.groups())))
    return lines[0], rows


def row_of(rows, leaf):
    found = [r for r in rows if r["stack"].split(";")[-1] == leaf]
    check(len(found) == 1, f"{len(found)} rows for {leaf}: {rows}")
    return found[0]


def series_order(dumps):
    """Oldest first, as the tools must order them: by mtime, then jemalloc's sequence number."""
    def key(path):
        seq = int(re.search(r"\.(\d+)\.(\d+)\.[a-z]\d*\.heap$", path).group(2))
        return (os.stat(path).st_mtime_ns, seq)
    return sorted(dumps, key=key)


def expected_fit(runs, leaf):
    """Python's own least squares for the stack ending in `leaf`, each dump converted by
    itself: per run, x (seconds) and y centred on the run's means, then a line through the
    origin (the fit with one intercept per run). Returns (slope per second, R^2)."""
    xs, ys = [], []
    first = min(os.stat(d).st_mtime_ns for run_dumps in runs for d in run_dumps)
    for run_dumps in runs:
        x = [(os.stat(d).st_mtime_ns - first) / 1e9 for d in series_order(run_dumps)]
        y = [sum(v for s, v in heapfold(d).items() if s.split(";")[-1] == leaf)
             for d in series_order(run_dumps)]
        xs += [v - statistics.fmean(x) for v in x]
        ys += [v - statistics.fmean(y) for v in y]
    slope = statistics.linear_regression(xs, ys, proportional=True).slope
    return slope, statistics.correlation(xs, ys) ** 2


def growing(header):
    """How many stacks the header says grow."""
    match = re.search(r"stacks, (\d+) grows?,", header)
    check(match, f"the header does not say how many stacks grow: {header}")
    return int(match.group(1))


def check_ranking(header, rows, what):
    check(rows[0]["site"] == LEAK_SITE and rows[0]["mono"] == "yes",
          f"{what}: the first suspect is not {LEAK_SITE}: {rows}")
    # Suspects are what grows: the cache that filled and stopped, the libstdc++ start-up
    # block that never moved and the batch buffer that is freed are not listed for being
    # there (they were, with growth 0B or below, before the field report).
    check(all(amount(r["growth"]) > 0 for r in rows), f"{what}: a row that does not grow: {rows}")
    check(growing(header) == len(rows), f"{what}: {growing(header)} grow, {len(rows)} listed")
    for leaf in ("fill_cache", "grow_buffer"):
        found = [r for r in rows if r["stack"].split(";")[-1] == leaf]
        check(not found or int(found[0]["rank"]) > 1, f"{what}: {leaf} ranks first")


def check_fit(rows, runs, what):
    leak = row_of(rows, "leak_steadily")
    slope, r2 = expected_fit(runs, "leak_steadily")
    check(abs(amount(leak["slope_s"]) - slope) <= 0.01 * slope,
          f"{what}: slope {leak['slope_s']}/s, Python fits {slope:.0f} B/s")
    check(abs(float(leak["r2"]) - r2) <= 0.006, f"{what}: R^2 {leak['r2']}, Python's {r2:.4f}")


# 1. One run of 20 iterations, the dumps given in no particular order.
single = leaky_series(20, "single")
text = run([tool("heapfold"), "-q", "--growth", *reversed(sorted(single))]).stdout
print(text)
header, rows = growth_table(text)
check(f"{len(single)} dumps in 1 run" in header, f"header: {header}")
check_ranking(header, rows, "one run")
check_fit(rows, [single], "one run")
leak = row_of(rows, "leak_steadily")
check(leak["last"] == "160.00kB", f"20 iterations leak 160 KiB, the table says {leak['last']}")
check(rows[0]["stack"].endswith(";main;leak_steadily"), f"the leak's stack: {rows[0]['stack']}")
# The cache grew faster than the leak and stopped: its persistent growth is none, so it
# is left out, or almost none. (An interval dump taken inside fill_cache's malloc, after
# it freed the entry it replaces, may catch the cache one entry short.)
caches = [r for r in rows if r["stack"].split(";")[-1] == "fill_cache"]
check(not caches or (amount(caches[0]["slope_s"]) > amount(leak["slope_s"])
                     and amount(caches[0]["growth"]) < 0.25 * amount(leak["growth"])),
      f"the cache's slope should be the larger, its persistent growth almost none: {caches}")
# A step is never "does not grow": what the table leaves out as not growing ends no higher
# than it began, and the cache that filled in 8 iterations and then held, when left out,
# is counted and listed as a stack that grew and then stopped.
under = text.splitlines()
for line in (line for line in under if LEFT_OUT.match(line)):
    for first, last in re.findall(r"\((\S+) -> (\S+)\)", line):
        check(amount(last) <= amount(first), f"a stack that grew is said not to grow: {line}")
if not caches:
    steps = [line for line in under if STEPS.match(line)]
    check(steps and "fill_cache (leaky.c:" in steps[0] and
          re.search(r"stacks, \d+ grows?, \d+ grew and then stopped,", header),
          f"the full cache is not told as a step:\n{text}")
check(text == run([tool("heapfold"), "-q", "--growth", *series_order(single)]).stdout,
      "the table depends on the order the dumps are given in")
# The same series as pprof profiles, given in no particular order: ordered by their
# time_nanos (each its dump's time), the same rows.
pprofs = []
for dump in single:
    pprofs.append(os.path.join(work, os.path.basename(dump) + ".pb.gz"))
    run([tool("jeprof2pprof"), "-q", dump, "-o", pprofs[-1]])
from_pprofs = run([tool("heapfold"), "-q", "--growth", *sorted(pprofs)]).stdout
check(growth_table(from_pprofs)[1] == rows, f"--growth over pprofs:\n{from_pprofs}\nover dumps:\n{text}")
shown = growth_table(run([tool("heapfold"), "-q", "--growth", "--nodecount", "2", *single]).stdout)
wanted = min(2, growing(shown[0]))
check(len(shown[1]) == wanted and f"{wanted} shown" in shown[0], f"--nodecount 2: {shown}")

# A final dump says so on the text's header line, in the SVG's subtitle and the HTML
# report's header, and names the largest of the interval dumps beside it (by the bytes
# in use its header line counts); an interval dump says nothing of it.
(final,) = [d for d in single if d.endswith(".f.heap")]
intervals = [d for d in single if not d.endswith(".f.heap")]


def header_bytes(dump):
    with open(dump) as f:
        f.readline()
        return int(f.readline().split(":")[2].split()[0])


largest = max(intervals, key=lambda d: (header_bytes(d), os.path.basename(d)))
pid = re.search(r"\.(\d+)\.\d+\.f\.heap$", final).group(1)
said = (f"a final dump, written at exit (prof_final): {len(intervals)} dumps taken while "
        f"process {pid} ran are beside it, the largest {os.path.basename(largest)}")
first_line = run([tool("heapfold"), "-q", "--text", final]).stdout.splitlines()[0]
check(first_line.startswith("inuse_space: ") and said in first_line,
      f"the final dump's header line: {first_line!r}, wanted {said!r}")
check(said in run([tool("heapfold"), "-q", "--svg", final]).stdout,
      "heapfold --svg does not say the dump was written at exit")
check(said in html_data(run([tool("heapfold"), "-q", "--html", final]).stdout)["notes"][0],
      "heapfold --html does not say the dump was written at exit")
check("at exit" not in run([tool("heapfold"), "-q", "--text", largest]).stdout.splitlines()[0],
      "an interval dump is said to be written at exit")

# 2. Two runs, ASLR on: their addresses differ, their stacks meet by name, and the leak's
# drop at the restart is no fall (each run has its own intercept).
first_run = leaky_series(16, "run1")
second_run = leaky_series(16, "run2")


def main_start(dump):
    with open(dump) as f:
        for line in f:
            if line.rstrip().endswith("/leaky") and " r-xp " in line:
                return line.split("-")[0]
    check(False, f"no executable mapping of leaky in {dump}")


check(main_start(first_run[0]) != main_start(second_run[0]),
      "both runs loaded leaky at one address: is ASLR off?")
text = run([tool("heapfold"), "-q", "--growth", *second_run, *first_run]).stdout
print(text)
header, rows = growth_table(text)
check(f"{len(first_run) + len(second_run)} dumps in 2 runs" in header, f"header: {header}")
check_ranking(header, rows, "two runs")
check_fit(rows, [first_run, second_run], "two runs")


# 3. pprof: go tool pprof -top -sample_index=growth lists the leak first; the heap values
# are the last dump's.
def top_functions(path, *args):
    out = go_pprof("-top", "-nodecount=20", *args, path).stdout
    rows = [line.split() for line in out.splitlines() if re.match(r"^\s*-?[\d.]+\w*\s+-?[\d.]+%", line)]
    return [(r[0], r[-1]) for r in rows]


for name, dumps in (("one run", single), ("two runs", first_run + second_run)):
    grown = os.path.join(work, "growth.pb.gz")
    run([tool("jeprof2pprof"), "-q", "--growth", *dumps, "-o", grown])
    top = top_functions(grown, "-sample_index=growth")
    check(top and top[0][1] == "leak_steadily", f"{name}: go tool pprof -top, growth:\n{top}")
    types, samples, _ = pprof_raw(grown)
    check(types[-2:] == ["growth", "slope"], f"{name}: sample types {types}")
    # In a unit go tool pprof scales (kB, MB), the rate said in the comments.
    check(top[0][0][-2:] in ("kB", "MB", "GB") or top[0][0][-1] == "B",
          f"{name}: go tool pprof prints the leak's growth as {top[0][0]!r}")
    comments = go_pprof("-comments", grown).stdout
    check("growth and slope are in bytes per second" in comments, f"{name}: {comments!r}")
last_alone = os.path.join(work, "last.pb.gz")
run([tool("jeprof2pprof"), "-q", series_order(second_run)[-1], "-o", last_alone])
check(top_functions(grown, "-sample_index=inuse_space") ==
      top_functions(last_alone, "-sample_index=inuse_space"),
      "the growth profile's inuse_space is not the last dump's")
leak_growth = sum(s["by_type"]["growth"] for s in samples if s["frames"][0] == "leak_steadily")
check(abs(leak_growth - amount(rows[0]["growth"])) <= 0.01 * leak_growth,
      f"pprof's growth of the leak {leak_growth}, the table's {rows[0]['growth']}")

# 4. The chart and the flame graph coloured by growth, as a browser shows them.
graph_path = os.path.join(work, "growth.svg")
run([tool("heapfold"), "-q", "--growth", "--svg", "--nodecount", "4", *single, "-o", graph_path])
with open(graph_path) as f:
    svg = f.read()
# Only what grows is charted (and sets the scale): the table's top 4 with growth above 0,
# not the full cache's flat line.
_, ranked = growth_table(run([tool("heapfold"), "-q", "--growth", "--nodecount", "4", *single]).stdout)
growing = 0
while growing < len(ranked) and amount(ranked[growing]["growth"]) > 0:
    growing += 1
check(growing >= 1, f"nothing grows in the table: {ranked}")
check(re.search(r"over time: the (stack that grows|%d stacks that grow)<" % growing, svg),
      f"the chart's title does not say it draws the {growing} that grow")
drawn = svg.count('<polyline class="growth-line"')
check(drawn == growing, f"{drawn} lines drawn, {growing} stacks grow")
frames = {f["name"]: f for f in flame_frames(svg)}
leak_fill, cache_fill = rgb(frames["leak_steadily"]["fill"]), rgb(frames["fill_cache"]["fill"])
check(frames["leak_steadily"]["note"].startswith("growth +")
      and leak_fill[0] == 255 and leak_fill[1] < 100,
      f"the leak's frame is not red with growth: {frames['leak_steadily']}")
check(cache_fill[1] > 190 and cache_fill[2] > 190,
      f"the full cache's frame is coloured as growth: {frames['fill_cache']}")
chromium_browser()  # the rest needs one; skipped without it
height = int(re.search(r'<svg [^>]*height="(\d+)"', svg).group(1))
shot = os.path.join(work, "growth.png")
chromium(f"--screenshot={shot}", f"--window-size=1200,{height}", f"file://{graph_path}")
width, rows_drawn, colours = png_colours(shot)
check((width, rows_drawn) == (1200, height), f"screenshot {width}x{rows_drawn}")
strokes = re.findall(r'<polyline class="growth-line" stroke="([^"]+)"', svg)
for stroke in strokes:
    check(colours[rgb(stroke)] >= 50, f"the line in {stroke} covers {colours[rgb(stroke)]} pixels")
check(colours[rgb(frames["leak_steadily"]["fill"])] >= 200, "the leak's frame is not drawn")
harness = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<object id="graph" type="image/svg+xml" data="growth.svg" width="1200" height="%d"></object>
<pre id="result">not run</pre>
<script>
document.getElementById("graph").addEventListener("load", function () {
  var doc = this.contentDocument, win = this.contentWindow, out = {};
  try {
    out.lines = Array.prototype.map.call(doc.querySelectorAll("#growth-lines polyline"),
      function (line) {
        var box = line.getBBox();
        return {points: line.points.numberOfItems, width: box.width, height: box.height,
                title: line.querySelector("title").textContent};
      });
    out.legend = Array.prototype.map.call(doc.querySelectorAll("#growth-legend text"),
      function (text) { return text.textContent; });
    var frames = win.heapkitFlame.frames;
    var leak = frames.findIndex(function (f) { return f.name === "leak_steadily"; });
    win.heapkitFlame.zoom(leak);
    out.zoomed = {width: frames[leak].rect.getAttribute("width"), full: frames[0].width};
  } catch (error) {
    out.error = String(error && error.stack || error);
  }
  document.getElementById("result").textContent = JSON.stringify(out);
});
</script></body></html>
""" % height
result = run_harness(write_file(work, "harness.html", harness))
check(len(result["lines"]) == growing and len(strokes) == growing, f"polylines: {result['lines']}")
check(all(line["points"] == len(single) and line["width"] > 1000 for line in result["lines"]),
      f"a line does not span the series: {result['lines']}")
check(len(result["legend"]) == growing and not any("fill_cache" in t for t in result["legend"])
      and result["legend"][0].startswith(f"1. {LEAK_SITE} (growth +"),
      f"legend: {result['legend']}")
check(result["lines"][0]["height"] > 10, "the leak's line is flat in the browser")
check(float(result["zoomed"]["width"]) == result["zoomed"]["full"],
      f"zooming into the leak's frame in the combined document: {result['zoomed']}")

# 5. Bad series, refused before anything is written.
os.makedirs(os.path.join(work, "other"))
alloc_dump = run_fixture(fixture("alloc_c_pie"), os.path.join(work, "other"))
target = os.path.join(work, "never.txt")
ordered = series_order(single)
relative = os.path.relpath(ordered[0])
bad = [
    ([ordered[0]], "growth needs at least 3 dumps of one program, taken one after another; 1 given"),
    (ordered[:2], "growth needs at least 3 dumps of one program, taken one after another; 2 given"),
    ([*ordered[:3], ordered[1]], f"{ordered[1]} is given twice: each dump of a series must be"),
    ([*ordered[:3], relative], f"{relative} is given twice (also as {ordered[0]})"),
    ([*ordered[:3], alloc_dump], "are dumps of different programs"),
    ([d for d in single + first_run + second_run if d.endswith(".f.heap")],
     "each of these 3 dumps is of another run"),
]
for tool_name in ("heapfold", "jeprof2pprof"):
    for dumps, message in bad:
        proc = run([tool(tool_name), "-q", "--growth", *dumps, "-o", target], check=False)
        check(proc.returncode == 1 and message in proc.stderr and not os.path.exists(target),
              f"{tool_name} on {dumps}: exit {proc.returncode}, {proc.stderr!r}")
proc = run([tool("heapfold"), "-q", "--growth", *ordered[:3], alloc_dump], check=False)
check("build id" in proc.stderr and "alloc_c_pie" in proc.stderr and "leaky" in proc.stderr,
      f"the two programs are not named: {proc.stderr!r}")
for args in (["--nodecount", "3", *ordered[:3]], ["--growth", "--base", ordered[0], *ordered[1:4]]):
    proc = run([tool("heapfold"), *args], check=False)
    check(proc.returncode == 1 and ("--nodecount" in proc.stderr or "--base" in proc.stderr),
          f"heapfold {args}: {proc.returncode} {proc.stderr!r}")

# 6. At exit. leaky free-at-exit frees its leak in an atexit handler, which runs before
# jemalloc's (registered first) writes the final dump: the leak reads 0 there, and the
# report says that the run ends with a dump written after the program freed at exit.
freed = leaky_series(12, "freed", "free-at-exit")
final = [d for d in freed if d.endswith(".f.heap")]
check(len(final) == 1 and
      sum(v for s, v in heapfold(final[0]).items() if s.endswith(";leak_steadily")) == 0,
      f"the final dump after free-at-exit still holds the leak: {final}")
text = run([tool("heapfold"), "-q", "--growth", *freed]).stdout
check(f"note: the run ends with a final dump ({final[0]}): jemalloc writes it at exit" in text,
      f"no note on the final dump:\n{text}")
pb = os.path.join(work, "final.pb.gz")
run([tool("jeprof2pprof"), "-q", "--growth", *freed, "-o", pb])
check(f"final dump ({final[0]})" in go_pprof("-raw", "-symbolize=none", pb).stdout,
      "the pprof's comments lack the note on the final dump")
svg = run([tool("heapfold"), "-q", "--growth", "--svg", *freed]).stdout
check(f"final dump ({final[0]})" in svg, "the growth graph lacks the note on the final dump")
# A run of one dump after the series (as varnish's manager's final dump after its child's
# series): leaky run for 0 iterations writes only its final dump, holding no leak. The
# leak's first -> last stays the run that grew (it read "8.00kB -> 0B").
os.makedirs(os.path.join(work, "after"))
alone = run_fixture(program, os.path.join(work, "after"), args=("0",))
text = run([tool("heapfold"), "-q", "--growth", *single, alone]).stdout
header, rows = growth_table(text)
leak = row_of(rows, "leak_steadily")
grown = series_order(single)
want = [sum(v for s, v in heapfold(d).items() if s.endswith(";leak_steadily"))
        for d in (grown[0], grown[-1])]
check(f"{len(single) + 1} dumps in 2 runs" in header and
      (amount(leak["first"]), amount(leak["last"])) == tuple(want),
      f"a run of one dump after the series: {leak['first']} -> {leak['last']}, the run that "
      f"grew went {want[0]} -> {want[1]}\n{text}")
check(f"note: a run of one dump ({alone}), which shows no growth" in text,
      f"no note on the run of one dump:\n{text}")

# A series where nothing grows at the end: one stack rose 0 -> 8 kB and held for its last
# 4 dumps (a step), one held 4 kB throughout. The header says none grows and that one grew
# and then stopped, above the rows that read "0B -> 8.00kB".
steps_dir = os.path.join(work, "steps")
os.makedirs(steps_dir)
held = [0, 4096, 8192, 8192, 8192, 8192]
for d, step in enumerate(held):
    path = os.path.join(steps_dir, f"jeprof.4242.{d}.i{d}.heap")
    stacks = [("0x555500001010 0x555500002010", 1, 4096)]
    if step:
        stacks.append(("0x555500001020 0x555500002020", step // 4096, step))
    total = sum(count for _, count, _ in stacks), sum(size for _, _, size in stacks)
    with open(path, "w") as f:
        f.write(f"heap_v2/1\n  t*: {total[0]}: {total[1]} [0: 0]\n")
        f.writelines(f"@ {frames}\n  t*: {count}: {size} [0: 0]\n" for frames, count, size in stacks)
        f.write("\nMAPPED_LIBRARIES:\n555500000000-555500010000 r-xp 00000000 fe:00 1  /nonexistent/app\n")
    os.utime(path, (1_700_000_000 + d, 1_700_000_000 + d))
text = run([tool("heapfold"), "-q", "--no-symbolize", "--growth",
            *glob.glob(f"{steps_dir}/*.heap")]).stdout
header, rows = growth_table(text)
check("2 stacks, none grows, 1 grew and then stopped; the largest, 2 shown" in header and
      [(r["first"], r["last"]) for r in rows] == [("0B", "8.00kB"), ("4.00kB", "4.00kB")],
      f"a series of a step and a flat stack:\n{text}")

# 7. Two stacks leak at one site (leak_steadily called from main and from leak_again):
# each row says which it is, in the table and in the HTML report, where no stack is shown.
callers = leaky_series(12, "callers", "two-callers")
text = run([tool("heapfold"), "-q", "--growth", *callers]).stdout
_, rows = growth_table(text)
leaks = {r["stack"].split(";")[-2]: r["site"] for r in rows if r["stack"].endswith(";leak_steadily")}
check(leaks == {"main": f"{LEAK_SITE} via main", "leak_again": f"{LEAK_SITE} via leak_again"},
      f"the two leaking stacks are not told apart: {leaks}\n{text}")
suspects = html_data(run([tool("heapfold"), "-q", "--growth", "--html", *callers]).stdout)
sites = [s["site"] for s in suspects["series"]["suspects"]]
check(set(leaks.values()) <= set(sites), f"the HTML report's suspects are not told apart: {sites}")
print("ok")
