# SPDX-License-Identifier: MIT
"""--base on dumps of two runs of one program (ASLR on, so no address is shared): heapfold
writes difffolded.pl's two-column lines (and agrees with difffolded.pl), jeprof2pprof
writes a pprof of new - base that go tool pprof reads as it reads -diff_base, and the
totals are after - before."""

import glob
import os
import re
import subprocess

from heapkit_e2e import (PROFILE_CONF, check, fixture, flame_frames, flamegraph_tool, go_pprof,
                         heapfold, run, tool, workdir)

work = workdir()
program = fixture("leaky")


def run_leaky(iterations, prefix):
    env = dict(os.environ, LD_PRELOAD=os.environ["HEAPKIT_JEMALLOC_SO"],
               MALLOC_CONF=f"{PROFILE_CONF},prof_prefix:{work}/{prefix}")
    run([program, str(iterations)], env=env)
    (dump,) = glob.glob(f"{work}/{prefix}.*.f.heap")
    return dump


before = run_leaky(10, "before")
after = run_leaky(30, "after")

# leak_steadily keeps 8 KiB an iteration: 20 more iterations, 160 KiB more in use.
grown = 20 * 8192


def diff_lines(text):
    lines = {}
    for line in text.splitlines():
        stack, old, new = line.rsplit(" ", 2)
        check(stack not in lines, f"stack twice: {stack!r}")
        lines[stack] = (int(old), int(new))
    return lines


ours = diff_lines(run([tool("heapfold"), "--base", before, after]).stdout)
leak = [v for s, v in ours.items() if s.endswith(";leak_steadily")]
check(len(leak) == 1 and leak[0][1] - leak[0][0] == grown, f"leak_steadily before/after: {ours}")
check(sum(new for _, new in ours.values()) == sum(heapfold(after).values())
      and sum(old for old, _ in ours.values()) == sum(heapfold(before).values()),
      f"the columns do not add up to the dumps' totals: {ours}")

# difffolded.pl, the reference, on the two single-column outputs says the same.
difffolded = flamegraph_tool("difffolded.pl")
if difffolded:
    paths = []
    for name, dump in (("before", before), ("after", after)):
        path = os.path.join(work, name + ".folded")
        with open(path, "w") as f:
            f.write(run([tool("heapfold"), dump]).stdout)
        paths.append(path)
    theirs = diff_lines(run(["perl", difffolded, *paths]).stdout)
    check(theirs == ours, f"difffolded.pl says\n{theirs}\nheapfold --base says\n{ours}")

# The differential flame graph, drawn natively: widths are after's, leak_steadily grew.
frames = flame_frames(run([tool("heapfold"), "--base", before, after, "--svg"]).stdout)
leak_frames = [f for f in frames if f["name"] == "leak_steadily"]
check(len(leak_frames) == 1 and leak_frames[0]["value"] == leak[0][1]
      and leak_frames[0]["delta"] is not None and float(leak_frames[0]["delta"]) > 0,
      f"leak_steadily in the differential SVG: {leak_frames}")
check(all(f["delta"] is not None and float(f["delta"]) == 0 for f in frames
          if f["name"] == "fill_cache"), "the cache did not change, yet its frame says so")

# Several base dumps merge: the base twice counts twice.
twice = diff_lines(run([tool("heapfold"), "-q", "--base", before, "--base", before, after]).stdout)
check(sum(old for old, _ in twice.values()) == 2 * sum(old for old, _ in ours.values()),
      "two --base dumps are not merged")

# pprof: new - base, as go tool pprof's own -diff_base computes it.
def quantity(text):
    """go tool pprof's "20971520B" or "75" (with -unit=B) as a number."""
    return int(text.rstrip("B"))


def flat_by_function(top):
    rows = {}
    for line in top.splitlines():
        m = re.match(r"^\s*(-?[\d.]+\w*)\s+-?[\d.]+%\s+-?[\d.]+%\s+(-?[\d.]+\w*)\s+-?[\d.]+%\s+(.+)$",
                     line)
        if m:
            rows[m.group(3)] = (quantity(m.group(1)), quantity(m.group(2)))
    return rows




diff = os.path.join(work, "diff.pb.gz")
run([tool("jeprof2pprof"), "--base", before, after, "-o", diff])
pb = {}
for name, dump in (("before", before), ("after", after)):
    pb[name] = os.path.join(work, name + ".pb.gz")
    run([tool("jeprof2pprof"), dump, "-o", pb[name]])
for index in ("inuse_space", "alloc_space", "alloc_objects"):
    exact = ("-top", "-nodecount=100", "-unit=B", f"-sample_index={index}")
    ours_top = flat_by_function(go_pprof(*exact, diff).stdout)
    go_top = flat_by_function(go_pprof(*exact, "-diff_base", pb["before"], pb["after"]).stdout)
    leaked = {"inuse_space": grown, "alloc_space": grown, "alloc_objects": 20}[index]
    check(ours_top == go_top and ours_top["leak_steadily"][0] == leaked,
          f"{index}: ours\n{ours_top}\ngo tool pprof -diff_base\n{go_top}")
print("ok")
