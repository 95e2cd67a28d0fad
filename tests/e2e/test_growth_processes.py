# SPDX-License-Identifier: MIT
"""--growth never splices processes that ran at the same time (varnish's manager and
child, a server's workers): two leaky processes run together, their prof_interval dumps
interleave in time, and a series of all of them is refused with each pid, its dumps and
how to pick one; the dumps of one process, as the message names them, are a series. Dumps
that share a modification time are charted a dump apart, not as a vertical jump."""

import glob
import os
import re
import shutil
import subprocess

from heapkit_e2e import JEMALLOC_SO, PROFILE_CONF, check, fixture, run, tool, workdir

directory = workdir()
env = dict(os.environ, LD_PRELOAD=JEMALLOC_SO,
           MALLOC_CONF=f"{PROFILE_CONF},lg_prof_interval:20,prof_prefix:{directory}/jeprof")
# Two processes at once, each pausing 20 ms an iteration: their dumps alternate in time.
processes = [subprocess.Popen([fixture("leaky"), "12", "20"], env=env) for _ in range(2)]
for process in processes:
    check(process.wait(timeout=60) == 0, "leaky failed")
pids = sorted(process.pid for process in processes)
dumps = glob.glob(f"{directory}/jeprof.*.heap")
by_pid = {pid: [d for d in dumps if f"/jeprof.{pid}." in d] for pid in pids}
check(all(len(files) >= 5 for files in by_pid.values()), f"too few dumps: {by_pid}")

for name in ("heapfold", "jeprof2pprof"):
    out = os.path.join(directory, f"out-{name}")
    proc = run([tool(name), "--growth", *dumps, "-o", out], check=False)
    check(proc.returncode == 1, f"{name}: spliced two processes (exit {proc.returncode})")
    check(re.search(r"error: these dumps are of 2 processes that ran at the same time",
                    proc.stderr), f"{name}: {proc.stderr!r}")
    for pid in pids:
        check(f"pid {pid}: {len(by_pid[pid])} dumps ({directory}/jeprof.{pid}.*.heap)"
              in proc.stderr, f"{name}: pid {pid} not listed with its dumps: {proc.stderr!r}")
    check(not os.path.exists(out), f"{name} left {out}")

# The advice taken: one process's dumps, as the message names them.
pattern = re.search(r"e\.g\. --growth (\S+)", proc.stderr).group(1)
chosen = glob.glob(pattern)
check(chosen and set(chosen) in (set(by_pid[pids[0]]), set(by_pid[pids[1]])),
      f"{pattern} is not one process's dumps")
proc = run([tool("heapfold"), "--growth", *chosen])
check(re.search(rf"{len(chosen)} dumps in 1 run", proc.stdout),
      f"one process's dumps are not one run: {proc.stdout[:300]!r}")
print("ok")

# Dumps that share a modification time (written within one tick of the file clock) are
# drawn a dump apart, not stacked up as vertical jumps at one time.
tied = os.path.join(directory, "tied")
os.makedirs(tied)
ordered = sorted(chosen, key=lambda d: int(re.search(r"\.(\d+)\.[a-z]\d*\.heap$", d).group(1)))
for dump in ordered:
    shutil.copy2(dump, tied)
copies = [os.path.join(tied, os.path.basename(d)) for d in ordered]
stamp = os.stat(copies[2]).st_mtime_ns
for dump in copies[2:5]:
    os.utime(dump, ns=(stamp, stamp))
svg = run([tool("heapfold"), "-q", "--growth", "--svg", *copies]).stdout
lines = re.findall(r'<polyline class="growth-line"[^>]* points="([^"]+)"', svg)
check(lines, "no line drawn")
for points in lines:
    xs = [float(point.split(",")[0]) for point in points.split()]
    check(all(b > a for a, b in zip(xs, xs[1:])), f"a vertical jump at a shared time: {xs}")
print("ok (tied times)")
