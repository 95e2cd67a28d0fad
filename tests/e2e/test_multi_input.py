# SPDX-License-Identifier: MIT
"""Dumps of two processes (different ASLR bases) merge into one profile."""

import os

from heapkit_e2e import (check, check_near, fixture, heapfold, leaf_is, pprof_raw, pprof_total,
                         run, run_fixture, sum_where, tool, workdir)

directory = workdir()
first = run_fixture(fixture("alloc_c_pie"), directory)
second = run_fixture(fixture("alloc_c_pie"), directory)

merged = heapfold(first, second)
check_near(sum_where(merged, leaf_is("hold_pages")), 2 * 4096000, "merged hold_pages")

out = os.path.join(directory, "merged.pb.gz")
proc = run([tool("jeprof2pprof"), first, second, "-o", out])
_, samples, mappings = pprof_raw(out)
check_near(pprof_total(samples, "inuse_space", lambda f: f[0] == "hold_pages"), 2 * 4096000,
           "merged pprof hold_pages")

twice = run([tool("heapfold"), first, first])
check("given more than once" in twice.stderr, f"no warning for a repeated input: {twice.stderr!r}")
print("ok")
