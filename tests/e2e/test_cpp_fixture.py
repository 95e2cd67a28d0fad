# SPDX-License-Identifier: MIT
"""A C++ fixture linked against jemalloc: demangled template names, operator new cut, and
the C++ library's allocator plumbing too (std::_Vector_base::_M_allocate,
std::__new_allocator::allocate): vector::reserve, the operation that allocated, is the
leaf (it was std::__new_allocator<T>::allocate, in every C++ stack)."""

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
reserve = [s for s in inuse if s.split(";")[-1].startswith("std::vector<") and
           s.split(";")[-1].endswith("::reserve(unsigned long)")]
check(len(reserve) == 1 and inuse[reserve[0]] == 4096,
      f"vector::reserve is not the leaf of its 4096 bytes: {[s for s in inuse if 'reserve' in s]}")
check(not any("_M_allocate" in s or "new_allocator" in s for s in inuse),
      "the C++ library's allocator plumbing left in folded stacks")

out = os.path.join(directory, "cpp.pb.gz")
run([tool("jeprof2pprof"), dump, "-o", out])
_, samples, _ = pprof_raw(out)
check_near(pprof_total(samples, "inuse_space", lambda f: f[0] == fill), 512000,
           "pprof inuse_space of Pool<Block>::fill")
top = go_pprof("-top", "-symbolize=none", out).stdout
check("store::Pool<store::Block>::fill" in top, f"go tool pprof -top lacks the template:\n{top}")
check("operator new" not in top, f"drop_frames did not remove operator new:\n{top}")
print("ok")
