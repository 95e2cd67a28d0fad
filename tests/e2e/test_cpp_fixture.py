# SPDX-License-Identifier: MIT
"""A C++ fixture linked against jemalloc: demangled template names, operator new cut."""

import os

from heapkit_e2e import (check, check_near, fixture, go_pprof, heapfold, leaf_is, pprof_raw,
                         pprof_total, run, run_fixture, sum_where, tool, workdir)

directory = workdir()
dump = run_fixture(fixture("alloc_cpp"), directory, preload=False)

inuse = heapfold(dump)
fill = "store::Pool<store::Block>::fill(int)"
check_near(sum_where(inuse, leaf_is(fill)), 512000, "inuse_space of Pool<Block>::fill")
# 64 arrays of 2048 bytes plus the 512-byte array of pointers.
check_near(sum_where(inuse, leaf_is("keep_arrays()")), 64 * 2048 + 512, "keep_arrays()")
check(not any("operator new" in s for s in inuse), "operator new left in folded stacks")

out = os.path.join(directory, "cpp.pb.gz")
run([tool("jeprof2pprof"), dump, "-o", out])
_, samples, _ = pprof_raw(out)
check_near(pprof_total(samples, "inuse_space", lambda f: f[0] == fill), 512000,
           "pprof inuse_space of Pool<Block>::fill")
top = go_pprof("-top", "-symbolize=none", out).stdout
check("store::Pool<store::Block>::fill" in top, f"go tool pprof -top lacks the template:\n{top}")
check("operator new" not in top, f"drop_frames did not remove operator new:\n{top}")
print("ok")
