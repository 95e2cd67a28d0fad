# SPDX-License-Identifier: MIT
"""Dumps given together are merged only when they are of one program and no two are
snapshots of one process:
- prof_interval's dumps of one process (a glob over its prefix) are refused, naming the
  process and its first and last dumps and pointing to --growth and --base (their sum was
  printed as the process's heap: 30 snapshots of a 1.5 MB heap "held" 20 MB);
- dumps of two programs (a wrapper shell's children under one prefix) are refused, listing
  each program with its count and the pattern of its dumps;
- two runs of one program still merge, and the same file given twice is still counted
  twice, with a warning."""

import glob
import os

from heapkit_e2e import JEMALLOC_SO, check, fixture, run, tool, workdir

directory = workdir()


def profile(program, prefix, extra=""):
    env = dict(os.environ, LD_PRELOAD=JEMALLOC_SO,
               MALLOC_CONF=f"prof:true,prof_final:true,lg_prof_sample:0,{extra}"
                           f"prof_prefix:{directory}/{prefix}")
    run([program], env=env)


def heapfold(*args):
    return run([tool("heapfold"), *args], check=False)


# --- snapshots of one process ------------------------------------------------------------
profile(fixture("leaky"), "interval", "lg_prof_interval:17,")
snapshots = sorted(glob.glob(f"{directory}/interval.*.heap"))
check(len(snapshots) >= 3, f"leaky wrote {len(snapshots)} dumps")
refused = heapfold("--text", *snapshots)
pid = os.path.basename(snapshots[0]).split(".")[1]
check(refused.returncode == 1 and refused.stdout == "", f"exit {refused.returncode}")
check(f"{len(snapshots)} dumps of process {pid}" in refused.stderr and
      f"interval.{pid}.0.i0.heap ..." in refused.stderr and ".f.heap)" in refused.stderr and
      "--growth" in refused.stderr and "--base" in refused.stderr,
      f"snapshots of one process: {refused.stderr!r}")
out = os.path.join(directory, "out.pb.gz")
refused = run([tool("jeprof2pprof"), *snapshots, "-o", out], check=False)
check(refused.returncode == 1 and not os.path.exists(out), "jeprof2pprof merged snapshots")
last = [s for s in snapshots if s.endswith(".f.heap")]
check(heapfold("--text", *last).returncode == 0, "the last snapshot alone is refused")

# --- two programs under one prefix ---------------------------------------------------------
profile(fixture("alloc_c_pie"), "wrapped")
profile(fixture("leaky"), "wrapped")
mixed = sorted(glob.glob(f"{directory}/wrapped.*.heap"))
refused = heapfold(*mixed)
check(refused.returncode == 1 and "these dumps are of 2 programs" in refused.stderr and
      f"{fixture('alloc_c_pie')} (1 dump: {directory}/wrapped." in refused.stderr and
      f"{fixture('leaky')} (1 dump: " in refused.stderr and ".*.heap)" in refused.stderr,
      f"two programs: {refused.stderr!r}")

# --- what still merges ---------------------------------------------------------------------
profile(fixture("alloc_c_pie"), "runs")
profile(fixture("alloc_c_pie"), "runs")
runs = sorted(glob.glob(f"{directory}/runs.*.heap"))
check(len(runs) == 2 and heapfold("--text", *runs).returncode == 0, "two runs do not merge")
twice = heapfold("--text", runs[0], runs[0])
check(twice.returncode == 0 and "given more than once" in twice.stderr,
      f"one file twice: {twice.returncode} {twice.stderr!r}")
print("ok")
