# SPDX-License-Identifier: MIT
"""A C++ fixture linked against jemalloc: demangled template names, operator new cut, the
C++ library's allocator plumbing too (std::_Vector_base::_M_allocate,
std::__new_allocator::allocate), and then the standard library's frames at the leaf end
(vector<char>::_M_default_append, _Rb_tree::_M_create_node, basic_string::_M_construct,
vector::reserve) and __cxa_allocate_exception: the program's own functions are the leaves
and the flat leaders, in heapfold --text and in go tool pprof -top; --keep-allocator-frames
brings the standard frames back."""

import os

from heapkit_e2e import (check, check_near, fixture, go_pprof, heapfold, leaf_is, pprof_raw,
                         pprof_total, run, run_fixture, sum_where, tool, workdir)

directory = workdir()
dump = run_fixture(fixture("alloc_cpp"), directory, preload=False)

inuse = heapfold(dump)
fill = "store::Pool<store::Block>::fill(int)"
# 500 blocks of 1024 bytes, and the vector of 500 pointers its reserve allocated (4096).
check_near(sum_where(inuse, leaf_is(fill)), 512000 + 4096, "inuse_space of Pool<Block>::fill")
# 64 arrays of 2048 bytes plus the 512-byte array of pointers.
check_near(sum_where(inuse, leaf_is("keep_arrays()")), 64 * 2048 + 512, "keep_arrays()")
# 100 vectors of 4096 bytes, and the array of the 100 vectors (2400 bytes, 2560 in jemalloc).
check_near(sum_where(inuse, leaf_is("remember_session(int)")), 100 * 4096 + 2560,
           "remember_session(int)")
# 200 map nodes, keys of 48 characters, values grown from 300 to 301 (at least 640 bytes each).
check(sum_where(inuse, leaf_is("index_user(int)")) >= 200 * 640, f"index_user(int): {inuse}")
check(not any("operator new" in s for s in inuse), "operator new left in folded stacks")
check(not any("_M_allocate" in s or "new_allocator" in s for s in inuse),
      "the C++ library's allocator plumbing left in folded stacks")
# Every stack through one of the program's functions ends at one of them.
own = ("store::Pool<store::Block>::fill(int)", "keep_arrays()", "remember_session(int)",
       "index_user(int)", "refuse_requests(int)", "main")
for stack in inuse:
    frames = stack.split(";")
    if any(f in own for f in frames):
        check(frames[-1] in own, f"a standard frame is the leaf: {stack}")

allocated = heapfold("--sample", "alloc_space", dump)
for stack in allocated:
    frames = stack.split(";")
    if any(f in own for f in frames):
        check(frames[-1] in own, f"a standard frame is the leaf of alloc_space: {stack}")
check(not any("__cxa_allocate_exception" in s for s in allocated),
      f"__cxa_allocate_exception left: {[s for s in allocated if '__cxa' in s]}")
check(sum_where(allocated, leaf_is("refuse_requests(int)")) >= 10 * 3000,
      f"refuse_requests(int) did not allocate its exceptions: {allocated}")


def text_rows(*args):
    """heapfold --text's rows, flat first: [(name, flat)]."""
    rows = []
    for line in run([tool("heapfold"), "-q", "--text", *args, dump]).stdout.splitlines()[2:]:
        flat, _, _, _, _, name = line.split(None, 5)
        rows.append((name, flat))
    return rows


leaders = [name for name, _ in text_rows()[:4]]
check(set(leaders) == {fill, "remember_session(int)", "keep_arrays()", "index_user(int)"},
      f"heapfold --text's flat leaders are not the program's functions: {leaders}")

# --keep-allocator-frames: the standard frames are back where they were.
kept = heapfold("--keep-allocator-frames", dump)
def through(stacks, function):
    return [s.split(";")[s.split(";").index(function) + 1:] for s in stacks
            if function in s.split(";")]
check(any(any("::_M_default_append(" in f for f in below)
          for below in through(kept, "remember_session(int)")),
      f"--keep-allocator-frames: no _M_default_append under remember_session: {kept}")
check(any(any(f.startswith("std::") and "::reserve(" in f for f in below)
          for below in through(kept, fill)), "--keep-allocator-frames: no vector::reserve")
check(any(any("_Rb_tree" in f for f in below) for below in through(kept, "index_user(int)")),
      "--keep-allocator-frames: no _Rb_tree frame under index_user")
kept_allocated = heapfold("--keep-allocator-frames", "--sample", "alloc_space", dump)
check(any("__cxa_allocate_exception" in below
          for below in through(kept_allocated, "refuse_requests(int)")),
      "--keep-allocator-frames lost __cxa_allocate_exception")

out = os.path.join(directory, "cpp.pb.gz")
run([tool("jeprof2pprof"), dump, "-o", out])
_, samples, _ = pprof_raw(out)
check_near(pprof_total(samples, "inuse_space", lambda f: f[0] == fill), 512000 + 4096,
           "pprof inuse_space of Pool<Block>::fill")
check_near(pprof_total(samples, "inuse_space", lambda f: f[0] == "remember_session(int)"),
           100 * 4096 + 2560, "pprof inuse_space of remember_session")
top = go_pprof("-top", "-symbolize=none", out).stdout
check("store::Pool<store::Block>::fill" in top, f"go tool pprof -top lacks the template:\n{top}")
check("operator new" not in top, f"drop_frames did not remove operator new:\n{top}")
rows = [line.split(None, 5)[5].removesuffix(" (inline)") for line in top.splitlines()
        if len(line.split(None, 5)) == 6 and line.split(None, 5)[1].endswith("%")]
check(set(rows[:4]) == {fill, "remember_session(int)", "keep_arrays()", "index_user(int)"},
      f"go tool pprof -top's flat leaders are not the program's functions:\n{top}")
print("ok")
