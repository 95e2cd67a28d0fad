# SPDX-License-Identifier: MIT
"""A newcomer's first hour, as the README leads it: the MALLOC_CONF it gives makes dumps
that `go tool pprof -top -sample_index=alloc_space` (the command just below it) reads; a
--growth pattern that matched nothing is "cannot open", not "1 given"; --nodecount takes a
whole number from 1 up; the README says how to read the pages of a build."""

import os
import re

from heapkit_e2e import JEMALLOC_SO, SOURCE_DIR, check, fixture, go_pprof, run, tool, workdir

readme = open(os.path.join(SOURCE_DIR, "..", "README.md")).read()
directory = workdir()

# The C/C++ section's MALLOC_CONF, as printed, on the C fixture; then the conversion
# section's commands.
conf = re.search(r"^MALLOC_CONF=(\S+) \\\n  LD_PRELOAD=\S+ \./myserver\n# at exit", readme,
                 re.M).group(1)
env = dict(os.environ, LD_PRELOAD=JEMALLOC_SO, MALLOC_CONF=f"{conf},prof_prefix:{directory}/jeprof")
run([fixture("alloc_c_pie")], env=env)
dump = next(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".f.heap"))
check("-sample_index=alloc_space" in readme, "the README no longer shows alloc_space")
pprof = os.path.join(directory, "heap.pb.gz")
run([tool("jeprof2pprof"), dump, "-o", pprof])
top = go_pprof("-top", "-sample_index=alloc_space", pprof)
check("alloc_space" in top.stdout or "hold_pages" in top.stdout,
      f"go tool pprof -sample_index=alloc_space on the README's dump: {top.stdout[:300]!r}")

# A pattern the shell left as it was: the file is missing, with a word on why.
proc = run([tool("heapfold"), "--growth", os.path.join(directory, "none", "jeprof.*.heap")],
           check=False)
check(proc.returncode == 1 and re.search(r"jeprof\.\*\.heap: cannot open: No such file or "
                                         r"directory \(a pattern that matched no file",
                                         proc.stderr), f"unexpanded pattern: {proc.stderr!r}")

# --nodecount: a whole number from 1 up; what once meant "all" silently is refused.
for bad in ("-1", "0", "1e9", "x"):
    proc = run([tool("heapfold"), "--text", "--nodecount", bad, dump], check=False)
    check(proc.returncode == 1 and "takes a whole number from 1 up" in proc.stderr,
          f"--nodecount {bad}: exit {proc.returncode}, {proc.stderr!r}")
table = run([tool("heapfold"), "--text", "--nodecount", "2", dump]).stdout
check(re.search(r"2 of \d+ functions shown", table), f"--nodecount 2: {table!r}")

# Pages of a build, as the README says to read them.
check("man -l build/man/heapfold.1" in readme, "the README does not say how to read a build's pages")
check(os.path.exists(os.path.join(os.environ["HEAPKIT_BUILD_ROOT"], "man", "heapfold.1")),
      "build/man/heapfold.1 is not built")
# The suite's console says what was skipped.
check("SKIP" in open(os.path.join(SOURCE_DIR, "run.sh")).read(), "run.sh does not print skips")
print("ok")
