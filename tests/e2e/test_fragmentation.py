# SPDX-License-Identifier: MIT
"""heapfold --stats: the offline estimate of fragmentation per stack, on
tests/fixtures/frag_stacks.c under the real jemalloc. Each bin's total is held against the
stats JSON's own figures, read here (curslabs x slab_size - curregs x size); the split
between stacks is printed beside the truth the fixture computed from its pointers
(experimental.utilization.query, tcmalloc's rule) and its error reported, not asserted
small: the estimate spreads a bin's free bytes in proportion to live objects."""

import json
import os
import shlex
import shutil

from heapkit_e2e import (check, fixture, go_pprof, heapfold, html_data, pprof_raw, pprof_total,
                         run, tool, workdir)

directory = workdir()
env = dict(os.environ)
env.pop("LD_PRELOAD", None)  # the fixture links jemalloc itself
# Sampled every 1 KiB on average: a sampled small object gets a large extent of its own,
# so with lg_prof_sample:0 no bin would hold any. No thread cache: its regions count as
# used in the slabs and are in no stack.
env["MALLOC_CONF"] = "prof:true,lg_prof_sample:10,tcache:false"
run([fixture("frag_stacks"), directory], env=env)
stats_path = os.path.join(directory, "stats.json")
heap = os.path.join(directory, "heap")
with open(os.path.join(directory, "truth.json")) as f:
    truth = json.load(f)


def bins_from_json(path):
    """{size: (free bytes, free regions)} of every bin with free regions, summed over the
    arenas printed (or the merged figures when printed)."""
    with open(path) as f:
        doc = json.load(f)["jemalloc"]
    shapes = doc["arenas"]["bin"]
    arenas = doc["stats.arenas"]
    chosen = [arenas["merged"]] if "merged" in arenas else [
        a for k, a in arenas.items() if k.isdigit()]
    out = {}
    for j, shape in enumerate(shapes):
        slabs = sum(a["bins"][j]["curslabs"] for a in chosen)
        regs = sum(a["bins"][j]["curregs"] for a in chosen)
        space = slabs * shape["slab_size"] - regs * shape["size"]
        regions = slabs * shape["nregs"] - regs
        if space or regions:
            out[shape["size"]] = (space, regions)
    return out


expected = bins_from_json(stats_path)
# The fixture's own classes: 96 (alloc_a, alloc_b) and 224 (alloc_c's 200 bytes).
check(96 in expected and 224 in expected, f"no fragmentation in bins 96 and 224: {expected}")

STACKS = ("alloc_a", "alloc_b", "alloc_c")


def per_bin(stacks):
    """The estimate's figures by bin: the pseudo-stacks' and the fixture's classes."""
    out, leaves = {}, {}
    for stack, value in stacks.items():
        leaf = stack.split(";")[-1]
        if leaf.startswith("[unattributed: bin "):
            out[int(leaf[len("[unattributed: bin "):-1])] = value
        elif leaf in STACKS:
            leaves[leaf] = leaves.get(leaf, 0) + value
        else:
            check(value == 0, f"a stack beside the fixture's was charged: {stack} {value}")
    out[96] = out.get(96, 0) + leaves.get("alloc_a", 0) + leaves.get("alloc_b", 0)
    out[224] = out.get(224, 0) + leaves.get("alloc_c", 0)
    return {size: value for size, value in out.items() if value}, leaves


space = heapfold("-q", "--stats", stats_path, heap)  # fragmentation_space by default
objects = heapfold("-q", "--stats", stats_path, "--sample", "fragmentation_objects", heap)
space_bins, estimate = per_bin(space)
objects_bins, _ = per_bin(objects)
check(all(v >= 0 for v in space.values()) and all(v >= 0 for v in objects.values()),
      "a negative charge")
check(space_bins == {size: figures[0] for size, figures in expected.items() if figures[0]},
      f"bins' free bytes differ from the stats JSON: {space_bins} vs {expected}")
check(objects_bins == {size: figures[1] for size, figures in expected.items() if figures[1]},
      f"bins' free regions differ from the stats JSON: {objects_bins} vs {expected}")

print("stack     truth (tcmalloc's rule)  estimate   error")
for name in STACKS:
    error = (estimate.get(name, 0) - truth[name]) / truth[name]
    print(f"{name}  {truth[name]:>14.0f} B  {estimate.get(name, 0):>10} B  {error:+.1%}")
for name in STACKS:
    check(estimate.get(name, 0) > 0, f"{name} charged nothing: {estimate}")

# Labelled an estimate in every view.
text = run([tool("heapfold"), "-q", "--text", "--stats", stats_path, heap]).stdout
check(text.startswith("fragmentation_space: ") and "estimate" in text.splitlines()[0],
      f"--text header does not say estimate: {text.splitlines()[0]!r}")
svg = run([tool("heapfold"), "-q", "--svg", "--stats", stats_path, heap]).stdout
check("Fragmentation per stack (an estimate" in svg, "the SVG's title does not say estimate")
page = run([tool("heapfold"), "-q", "--html", "--stats", stats_path, heap],
           binary=True).stdout.decode(errors="replace")
check("<title>heapkit: fragmentation (an estimate" in page,
      "the HTML page's title does not say estimate")
data = html_data(page)
check(any("estimate" in note for note in data["notes"]), f"the page's notes: {data['notes']}")

# pprof: the type is go tool pprof's to choose, its comment says estimate.
pprof = os.path.join(directory, "frag.pb.gz")
run([tool("jeprof2pprof"), "-q", "--stats", stats_path, heap, "-o", pprof])
types, samples, _ = pprof_raw(pprof)
check(types == ["fragmentation_objects", "fragmentation_space", "inuse_objects", "inuse_space"],
      f"pprof's sample types: {types}")
check(pprof_total(samples, "fragmentation_space", lambda f: True) ==
      sum(figures[0] for figures in expected.values()), "pprof's fragmentation_space total")
top = go_pprof("-top", "-sample_index=fragmentation_space", pprof).stdout
check("Type: fragmentation_space" in top and "alloc_c" in top and "estimate" in top,
      f"go tool pprof -top:\n{top}")

# A peak capture's statistics beside its dump (STEM.stats.json, STEM.heap) are found.
capture = os.path.join(directory, "capture")
os.mkdir(capture)
shutil.copy(heap, os.path.join(capture, "frag.1.0.peak.heap"))
shutil.copy(stats_path, os.path.join(capture, "frag.1.0.peak.stats.json"))
check(heapfold("-q", "--sample", "fragmentation_space",
               os.path.join(capture, "frag.1.0.peak.heap")) == space,
      "the statistics beside a capture's dump were not used")

# jestat's fragmentation section names the command, which runs as given.
report = run([tool("jestat"), stats_path, "--dump", heap]).stdout
pointer = [line for line in report.splitlines() if "which stacks hold them" in line]
check(len(pointer) == 1, f"jestat names no per-stack command:\n{report}")
command = shlex.split(pointer[0].split(": ", 1)[1])
check(command[:3] == ["heapfold", "--text", "--stats"], f"jestat's command: {command}")
check(run([tool("heapfold"), "-q", *command[1:]]).stdout == text, "jestat's command's output")
check("which stacks" not in run([tool("jestat"), stats_path]).stdout,
      "jestat names a command without the dump")

# Bad input: a clear message, no output.
out = os.path.join(directory, "never.txt")
bad = run([tool("heapfold"), "--sample", "fragmentation_space", heap, "-o", out], check=False)
check(bad.returncode == 1 and "--stats" in bad.stderr and not os.path.exists(out),
      f"fragmentation_space without --stats: {bad.returncode} {bad.stderr!r}")
bad = run([tool("heapfold"), "--stats", heap, heap, "-o", out], check=False)
check(bad.returncode == 1 and heap in bad.stderr and not os.path.exists(out),
      f"a dump given as --stats: {bad.returncode} {bad.stderr!r}")
bad = run([tool("heapfold"), "--stats", stats_path, "--base", heap, heap], check=False)
check(bad.returncode != 0 and "--base-stats" in bad.stderr,
      f"--stats with --base and no --base-stats: {bad.stderr!r}")


def keeping_free(share):
    """The statistics with classes 96 and 224 keeping `share` of their free regions (the
    rest counted as used): another moment of the same heap, written beside this test's."""
    with open(stats_path) as f:
        doc = json.load(f)
    shapes = doc["jemalloc"]["arenas"]["bin"]
    for arena in doc["jemalloc"]["stats.arenas"].values():
        for shape, figures in zip(shapes, arena["bins"]):
            if shape["size"] in (96, 224):
                free = figures["curslabs"] * shape["nregs"] - figures["curregs"]
                figures["curregs"] += free - int(free * share)
    path = os.path.join(directory, f"stats-{share}.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def change_by_bin(lines):
    """{size: after - before} of a --base folded output ("stack BEFORE AFTER")."""
    before, after = {}, {}
    for line in lines.splitlines():
        stack, old, new = line.rsplit(" ", 2)
        before[stack], after[stack] = int(old), int(new)
    old_bins, new_bins = per_bin(before)[0], per_bin(after)[0]
    return {size: new_bins.get(size, 0) - old_bins.get(size, 0)
            for size in old_bins.keys() | new_bins.keys()
            if new_bins.get(size, 0) != old_bins.get(size, 0)}


# --base with --base-stats: the change between two moments, each class's the difference of
# the two statistics' own figures.
half = keeping_free(0.5)
change = change_by_bin(run([tool("heapfold"), "-q", "--stats", stats_path, "--base-stats", half,
                            "--base", heap, heap]).stdout)
earlier = bins_from_json(half)
check(change == {size: expected[size][0] - earlier.get(size, (0, 0))[0]
                 for size in (96, 224)},
      f"--base-stats: the classes' change {change}, the statistics' {expected} - {earlier}")
header = run([tool("heapfold"), "-q", "--text", "--stats", stats_path, "--base-stats", half,
              "--base", heap, heap]).stdout.splitlines()[0]
check(header.startswith("change of fragmentation_space") and "estimate" in header,
      f"--text --base header does not say estimate: {header!r}")

# --growth over captures, each with its statistics beside it: the fixture's stacks grow by
# what their classes' free regions grow, and every view says estimate.
series = os.path.join(directory, "series")
os.mkdir(series)
for n, stats in enumerate([keeping_free(0.25), half, stats_path]):
    stem = os.path.join(series, f"frag.1.{n}.peak")
    shutil.copy(heap, stem + ".heap")
    shutil.copy(stats, stem + ".stats.json")
    os.utime(stem + ".heap", (1_000_000_000 + 60 * n,) * 2)
captures = sorted(os.path.join(series, name) for name in os.listdir(series)
                  if name.endswith(".heap"))
growth = run([tool("heapfold"), "-q", "--growth", "--sample", "fragmentation_space",
              *captures]).stdout
check(growth.startswith("fragmentation_space: 3 dumps") and "note: fragmentation_space is an "
      "estimate" in growth, f"--growth over fragmentation_space:\n{growth}")
ranked = [line.split()[-2] for line in growth.splitlines() if "frag_stacks.c" in line]
check(ranked == ["alloc_c", "alloc_a", "alloc_b"],
      f"--growth ranks {ranked}, the free regions grew most under alloc_c, then alloc_a")
chart = run([tool("heapfold"), "-q", "--growth", "--svg", "--sample", "fragmentation_space",
             *captures]).stdout
check("Fragmentation per stack (an estimate" in chart, "the growth chart does not say estimate")
print("ok")
