# SPDX-License-Identifier: MIT
"""jestat on known causes, made by tests/fixtures/rss_causes.c under the real jemalloc. The
fixture writes, at one moment, malloc_stats_print's JSON, /proc/self/smaps and what it reads
itself through mallctl (truth.txt); the report is held against those figures and against
this file's own reading of smaps and of the heap dump (formats.md section 2), never against
jestat's own output. Then bad input, and the SVG chart in headless Chromium."""

import json
import math
import os
import re
import shutil

from heapkit_e2e import (JEMALLOC_SO, check, check_near, chromium, fixture, png_colours, run,
                         tool, workdir, write_file)

directory = workdir()
jestat = tool("jestat")
MIB = 1 << 20


def cause(name, conf=None, where=None):
    """Runs the fixture for one cause (in directory `where`, by default its name); returns
    (its directory, its truth as a dict)."""
    out = os.path.join(directory, where or name)
    os.mkdir(out)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)  # the fixture links jemalloc itself
    env.pop("MALLOC_CONF", None)
    if conf:
        env["MALLOC_CONF"] = conf
    run([fixture("rss_causes"), name, out], env=env)
    with open(os.path.join(out, "truth.txt")) as f:
        truth = {k: int(v) for k, v in (line.split() for line in f)}
    return out, truth


def report(out, *extra):
    stats = os.path.join(out, "stats.json")
    return json.loads(run([jestat, stats, "--json", "--smaps", os.path.join(out, "smaps"),
                           *extra]).stdout)


def rows(report, section="allocator"):
    return {row["key"]: row["bytes"] for row in report[section]}


def smaps_totals(path):
    """Sums of Rss and Anonymous over the mappings, read here from the file."""
    totals = {"Rss": 0, "Anonymous": 0}
    with open(path) as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in totals:
                totals[name] += int(rest.split()[0]) * 1024
    return totals


def check_common(name, out, truth, got):
    """Every cause: jemalloc's totals as the fixture read them, steps that add up to each
    subtotal, and the RSS split adding up to smaps' own Rss."""
    mine = got["jemalloc"]
    for total in ("allocated", "active", "metadata", "resident", "mapped", "retained"):
        check(mine[total] == truth[f"stats.{total}"],
              f"{name}: {total} {mine[total]}, mallctl says {truth['stats.' + total]}")
    check(mine["page"] == truth["page"], f"{name}: page {mine['page']}")
    for section in ("allocator", "rss"):
        running = 0
        for row in got[section]:
            if row["subtotal"] and row["key"] != "profile":
                check(row["bytes"] == running,
                      f"{name}: {section} steps add up to {running}, not {row['key']} "
                      f"{row['bytes']}")
            running = row["bytes"] if row["subtotal"] else running + row["bytes"]
            check(row["what"] and (row["subtotal"] or row["knob"]),
                  f"{name}: row {row['key']} lacks its sentence or knob")
    allocator = rows(got)
    check(allocator["dirty"] == truth["pdirty"] * truth["page"], f"{name}: dirty row")
    check(allocator["tcache"] == truth["tcache_bytes"], f"{name}: tcache row")
    smaps = smaps_totals(os.path.join(out, "smaps"))
    rss = rows(got, "rss")
    check(rss["rss"] == smaps["Rss"], f"{name}: RSS {rss['rss']}, smaps says {smaps['Rss']}")
    check(rss["file_backed"] == smaps["Rss"] - smaps["Anonymous"], f"{name}: file-backed row")


def dump_inuse(path):
    """The heap dump's in-use bytes, unsampled as formats.md section 2 says (rounded per
    stack)."""
    total, period, in_stacks = 0, None, False
    with open(path) as f:
        for line in f:
            if line.startswith("heap_v2/"):
                period = int(line.split("/")[1])
            elif line.startswith("@"):
                in_stacks = True
            elif line.strip().startswith("t*:") and in_stacks:
                objects, size = (int(x) for x in line.split("[")[0].split(":")[1:3])
                if objects and size:
                    scale = 1 / (1 - math.exp(-(size / objects) / period))
                    total += math.floor(size * scale + 0.5)
            elif line.startswith("MAPPED_LIBRARIES"):
                break
    return total


def dump_small_samples(path, extent):
    """Live sampled objects of stacks whose mean size is under `extent` (the smallest large
    size class), and their bytes, as sampled: read here from the dump."""
    objects_in_all, bytes_in_all, in_stacks = 0, 0, False
    with open(path) as f:
        for line in f:
            if line.startswith("@"):
                in_stacks = True
            elif line.strip().startswith("t*:") and in_stacks:
                objects, size = (int(x) for x in line.split("[")[0].split(":")[1:3])
                if objects and size // objects < extent:
                    objects_in_all += objects
                    bytes_in_all += size
            elif line.startswith("MAPPED_LIBRARIES"):
                break
    return objects_in_all, bytes_in_all


def knob(report, key):
    return next(r["knob"] for r in report["allocator"] if r["key"] == key)


def check_sampled_pages(name, out, truth, got):
    """Profiling's own pages: each live sampled small object alone in an extent of the
    smallest large class, which the fixture's mallctl counts as that class's curlextents."""
    extent = truth["lextent0.size"]
    objects, size = dump_small_samples(os.path.join(out, "heap"), extent)
    check(objects == truth["lextent0.curlextents"] > 0,
          f"{name}: {objects} small samples in the dump, mallctl's lextents.0.curlextents "
          f"{truth['lextent0.curlextents']}")
    check(rows(got)["sampled_pages"] == objects * extent - size,
          f"{name}: sampled-object pages {rows(got)['sampled_pages']}, the dump and mallctl "
          f"say {objects} x {extent} - {size}")
    check(rows(got)["sampled_page_pad"] == objects * truth["page"],
          f"{name}: cache_oblivious pages {rows(got)['sampled_page_pad']}")
    return rows(got)["sampled_pages"]


# (a) Small objects, 90% freed at random: the three size classes top the worst bins, each
# with its wasted bytes as mallctl's curslabs x slab_size - curregs x size.
out, truth = cause("fragment", "prof:true,lg_prof_sample:16")
got = report(out, "--dump", os.path.join(out, "heap"))
check_common("fragment", out, truth, got)
worst = {b["size"]: b["wasted"] for b in got["worst_bins"][:3]}
check(set(worst) == {48, 112, 224}, f"worst size classes {sorted(worst)}, not 48, 112, 224")
for size, wasted in worst.items():
    check_near(wasted, truth[f"bin_wasted.{size}"], f"wasted bytes of size class {size}", 0.05)
expected_waste = sum(v for k, v in truth.items() if k.startswith("bin_wasted."))
check_near(got["slab_waste"], expected_waste, "partly used slabs in all", 0.05)
check(rows(got)["slab_waste"] == got["slab_waste"], "the slab row is not the bins' sum")
check(got["profile_inuse"] == dump_inuse(os.path.join(out, "heap")),
      f"profile row {got['profile_inuse']}, the dump says {dump_inuse(os.path.join(out, 'heap'))}")
# Sampled every 64 KiB: an estimate of what the fixture knows it holds, not more.
check(0.6 * truth["held"] <= got["profile_inuse"] <= 1.5 * truth["held"],
      f"profile in use {got['profile_inuse']} vs {truth['held']} held")
sampled = check_sampled_pages("fragment", out, truth, got)
check("lg_prof_sample (now 16)" in knob(got, "sampled_pages"), knob(got, "sampled_pages"))
# Without the dump, the held row bounds them by the 16 KiB class's extents (mallctl's).
held = next(r["what"] for r in report(out)["allocator"] if r["key"] == "program")
check(f"at most {truth['lextent0.curlextents']} x {truth['lextent0.size']} bytes" in held, held)
# One arena: fewer arenas cannot help, and is not offered; decay runs while it allocates.
check("narenas" not in knob(got, "slab_waste"), knob(got, "slab_waste"))
check("while the program allocates" in knob(got, "dirty"), knob(got, "dirty"))
# Sampling four times as often: about four times the sampled objects and their pages. At
# lg_prof_sample:16 only ~37 objects are sampled (Poisson: +-6), so the ratio is bounded
# at three standard deviations either way (one run in ~40 read 6.3).
out, truth = cause("fragment", "prof:true,lg_prof_sample:14", "fragment14")
finer = check_sampled_pages("fragment at 14", out, truth, report(out, "--dump",
                                                                   os.path.join(out, "heap")))
check(2 * sampled <= finer <= 8 * sampled,
      f"sampled-object pages {sampled} at lg_prof_sample:16, {finer} at 14")
out = os.path.join(directory, "fragment")
text = run([jestat, os.path.join(out, "stats.json")]).stdout
for needle in ("partly used slabs", "Worst size classes", "dirty_decay_ms", "knob:"):
    check(needle in text, f"the table lacks {needle!r}:\n{text}")

# (b) A 64 MiB block freed with purging by time off: it stays as dirty pages.
out, truth = cause("dirty", "dirty_decay_ms:-1")
got = report(out)
check_common("dirty", out, truth, got)
check(rows(got)["dirty"] >= 64 * MIB, f"dirty row {rows(got)['dirty']} under 64 MiB")
check(got["jemalloc"]["dirty_decay_ms"] == -1, "dirty_decay_ms in force is not -1")
check("never by time" in next(r["what"] for r in got["allocator"] if r["key"] == "dirty"),
      "the dirty row does not say decay is off")
check("a finite dirty_decay_ms" in knob(got, "dirty"), knob(got, "dirty"))
# With background threads and a finite decay time they go back by themselves.
out, truth = cause("dirty", "background_thread:true,dirty_decay_ms:30000", "dirty_bg")
got = report(out)
check(rows(got)["dirty"] == 0 or "by themselves within dirty_decay_ms (30000 ms)"
      in knob(got, "dirty"), knob(got, "dirty"))
check("a finite dirty_decay_ms" not in knob(got, "dirty"), knob(got, "dirty"))

# (c) 64 MiB by direct mmap: other anonymous memory, not jemalloc's.
out, truth = cause("mmap")
got = report(out)
check_common("mmap", out, truth, got)
check_near(rows(got, "rss")["other_anonymous"], truth["mmap_bytes"], "other anonymous row", 0.05)

# (d) 16 threads holding thread caches: the cache row, several arenas, stacks.
out, truth = cause("threads")
got = report(out)
check_common("threads", out, truth, got)
check(truth["tcache_bytes"] > 0, "the threads' caches are empty")
check(got["jemalloc"]["arenas_in_use"] == truth["arenas_in_use"] > 1,
      f"arenas in use {got['jemalloc']['arenas_in_use']}, mallctl says {truth['arenas_in_use']}")
# Fewer arenas offered only when the waste is spread over them, as this file reads the
# per-arena bins of the JSON.
document = json.load(open(os.path.join(out, "stats.json")))["jemalloc"]
shapes = document["arenas"]["bin"]
waste = [sum(b["curslabs"] * shape["slab_size"] - b["curregs"] * shape["size"]
             for b, shape in zip(arena["bins"], shapes))
         for key, arena in document["stats.arenas"].items() if key.isdigit()]
spread = len(waste) > 1 and sum(waste) > 0 and max(waste) < 0.75 * sum(waste)
check(knob(got, "slab_waste").startswith("fewer arenas") == spread,
      f"per-arena waste {waste}: {knob(got, 'slab_waste')}")
stacks = rows(got, "rss")["thread_stacks"]
check(17 * 4096 <= stacks <= 17 * 8 * MIB, f"thread stacks {stacks} for 17 threads")

# Bad input: a message naming the file, exit 1, no output file.
stats_path = os.path.join(directory, "threads", "stats.json")
with open(stats_path) as f:
    good = f.read()
document = json.loads(good)
document["jemalloc"]["config"]["stats"] = False
for key in ("stats", "stats.arenas"):
    del document["jemalloc"][key]
# The statistics inside a program's standard error (MALLOC_CONF=stats_print:true with
# "2> stats.json"): found, the rest said and skipped, the same report.
stream = write_file(directory, "stderr.txt",
                    "heapkit-agent[41]: serving http://127.0.0.1:6060/debug/pprof/\n"
                    "worker: {\"started\": 1}\n" + good + "\nbye\n")
proc = run([jestat, stream, "--json"])
check(json.loads(proc.stdout)["allocator"] == json.loads(run([jestat, stats_path, "--json"]).stdout)
      ["allocator"], "the statistics in a stream read otherwise than alone")
check(f"jestat: note: {stream}: skipped 2 lines before the statistics and 1 after" in proc.stderr
      and "heapkit-agent[41]: serving" in proc.stderr, f"the note: {proc.stderr!r}")
without_general = json.loads(good)
del without_general["jemalloc"]["opt"]
cases = {
    "truncated.json": (good[: len(good) // 2], "truncated"),
    "nogeneral.json": (json.dumps(without_general),
                       'jemalloc.opt is missing or not an object (printed without the general '
                       'section: drop "g" from stats_print_opts)'),
    "other.json": (json.dumps({"name": "left-pad", "version": "1.3.0"}), "not jemalloc"),
    "nostats.json": (json.dumps(document), "without statistics"),
    "empty.txt": ("", "not jemalloc statistics"),
}
for name, (data, said) in cases.items():
    path = write_file(directory, name, data)
    target = os.path.join(directory, name + ".out")
    proc = run([jestat, path, "-o", target], check=False)
    check(proc.returncode == 1, f"{name}: exit {proc.returncode}")
    check(proc.stderr.startswith(f"jestat: error: {path}") and said in proc.stderr,
          f"{name}: {proc.stderr!r}")
    check(not os.path.exists(target), f"{name}: an output file was left")
proc = run([jestat, directory], check=False)
check(proc.returncode == 1 and proc.stderr == f"jestat: error: {directory}: is a directory, not "
      "jemalloc statistics\n", proc.stderr)

# Statistics printed at exit (README's recipe: stats_print:true, "2> stats.json") are taken
# after the program's destructors and atexit handlers: leaky free-at-exit frees its leak
# in one. jestat says so, in every format; statistics taken while running do not.
at_exit = os.path.join(directory, "at_exit")
os.mkdir(at_exit)
env = dict(os.environ, LD_PRELOAD=JEMALLOC_SO, MALLOC_CONF="stats_print:true,stats_print_opts:J")
proc = run([fixture("leaky"), "8", "0", "free-at-exit"], env=env)
exit_stats = write_file(at_exit, "stats.json", proc.stderr)
text = run([jestat, exit_stats]).stdout
check("note: printed at exit (opt.stats_print:true): after the program's destructors" in text,
      f"jestat on statistics printed at exit:\n{text}")
check(json.loads(run([jestat, exit_stats, "--json"]).stdout)["jemalloc"]["printed_at_exit"],
      "--json does not say the statistics were printed at exit")
check("Printed at exit" in run([jestat, exit_stats, "--svg"]).stdout,
      "the chart does not say the statistics were printed at exit")
running = run([jestat, os.path.join(directory, "fragment", "stats.json")]).stdout
check("printed at exit" not in running, f"statistics taken while running: {running}")

# The chart: drawn by Chromium, each kind of bar in its colour.
if shutil.which("chromium") is None:
    print("chart not checked: chromium is not installed (tests/install-packages.sh installs it)")
    raise SystemExit(0)
svg = os.path.join(directory, "fragment", "waterfall.svg")
run([jestat, os.path.join(directory, "fragment", "stats.json"), "--smaps",
     os.path.join(directory, "fragment", "smaps"), "--svg", "-o", svg])
shot = os.path.join(directory, "waterfall.png")
chromium(f"--screenshot={shot}", "--window-size=1000,760", f"file://{svg}")
width, height, colours = png_colours(shot)
for name, colour in (("subtotal", (0x4E, 0x79, 0xA7)), ("step", (0xE1, 0x57, 0x59))):
    check(colours[colour] >= 500, f"{name} bars cover {colours[colour]} pixels")
if os.environ.get("JESTAT_KEEP_SHOT"):
    shutil.copy(shot, os.environ["JESTAT_KEEP_SHOT"])

# Address space only (retained, here 100 times what is mapped): drawn apart, in grey, to
# its own scale, so that the rows costing memory keep the chart's width.
swollen = json.loads(open(os.path.join(directory, "fragment", "stats.json")).read())
mapped = swollen["jemalloc"]["stats"]["mapped"]
swollen["jemalloc"]["stats"]["retained"] = 100 * mapped
svg = os.path.join(directory, "retained.svg")
run([jestat, write_file(directory, "retained.json", json.dumps(swollen)), "--svg", "-o", svg])
drawn = {}  # row label -> (bar width, fill)
for label, width, fill in re.findall(r'<g><title>([^:<]+): -?\d+ bytes\..*?</title>\n<text[^>]*>'
                                     r'[^<]*</text>\n<rect x="[\d.]+" y="\d+" width="([\d.]+)" '
                                     r'height="\d+" fill="([^"]+)"', open(svg).read()):
    drawn[label] = (float(width), fill)
widest = max(w for w, _ in drawn.values())
check(drawn["= mapped"][0] >= 0.9 * widest,
      f"= mapped is drawn {drawn['= mapped'][0]} px wide of {widest}: squeezed by retained")
check(drawn["retained"][1] == "#bab0ac" and drawn["= virtual"][1] == "#79706e",
      f"address-space rows not in grey: {drawn['retained']}, {drawn['= virtual']}")
shot = os.path.join(directory, "retained.png")
chromium(f"--screenshot={shot}", "--window-size=1000,820", f"file://{svg}")
_, _, colours = png_colours(shot)
for name, colour in (("step", (0xE1, 0x57, 0x59)), ("retained", (0xBA, 0xB0, 0xAC))):
    check(colours[colour] >= 500, f"{name} bars cover {colours[colour]} pixels")
if os.environ.get("JESTAT_KEEP_SHOT"):
    shutil.copy(shot, os.environ["JESTAT_KEEP_SHOT"] + ".retained.png")
print("jestat: fragment, dirty, mmap, threads, bad input and the chart checked")
