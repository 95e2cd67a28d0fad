# SPDX-License-Identifier: MIT
"""A real program's allocation log: Debian's CPython under jemalloc (LD_PRELOAD) making a
4 KiB bytearray it drops at once and an 8 KiB one a consumer thread frees, 3000 times.
The pprof's totals and the bytearray site's temporaries and cross-thread frees are checked
against a computation over the JSON log."""

import glob
import json
import math
import os
import sys

from heapkit_e2e import (JEMALLOC_SO, check, pprof_raw, run, skip_without_debug_file, tool,
                         workdir)

PYTHON = "/usr/bin/python3"  # Debian's, not a virtual environment's
if not os.path.exists(PYTHON):
    print(f"SKIP: {PYTHON} is absent (Debian package python3)")
    sys.exit(77)
# The bytearrays' allocating function is named from the interpreter's DWARF.
INTERPRETER = os.path.realpath(PYTHON)
skip_without_debug_file(INTERPRETER, os.path.basename(INTERPRETER) + "-dbg",
                        "PyByteArray_Resize's frames cannot be named")

WORK = """
import threading, queue
q = queue.Queue()
def consumer():
    previous = None
    while True:
        item = q.get()
        # Frees the one before: its put() returned before this one was put, so the main
        # thread no longer holds it (freeing this one at once could race with put's own
        # reference, and the main thread would free it: 2999 of 3000 in one CI run).
        previous = item
        if item is None:
            return
t = threading.Thread(target=consumer)
t.start()
for i in range(3000):
    s = bytearray(4096)
    q.put(bytearray(8192))
q.put(None)
t.join()
"""

directory = workdir()
env = dict(os.environ, LD_PRELOAD=JEMALLOC_SO,
           MALLOC_CONF="prof:true,prof_log:true,prof_time_resolution:high,lg_prof_sample:0,"
                       f"prof_final:true,prof_prefix:{directory}/jeprof")
run([PYTHON, "-c", WORK], env=env)
(log_path,) = glob.glob(f"{directory}/jeprof.*.json")
(dump_path,) = glob.glob(f"{directory}/jeprof.*.f.heap")
with open(log_path) as f:
    log = json.load(f)
period = 2 ** log["info"]["lg_sample_rate"]
uids = [t["thr_uid"] for t in log["threads"]]


def weight(usize):
    return 1 / (1 - math.exp(-usize / period))


allocations = log["allocations"]
total_objects = sum(weight(a["usize"]) for a in allocations)
total_bytes = sum(weight(a["usize"]) * a["usize"] for a in allocations)
# The 8 KiB bytearrays (8193 bytes asked: a NUL at the end) and those the consumer freed.
big = [a for a in allocations if a["usize"] >= 8192]
cross = [a for a in big if uids[a["alloc_thread"]] != uids[a["free_thread"]]]
print(f"{len(allocations)} allocations; {len(big)} of 8 KiB or more, {len(cross)} freed by another thread")
check(len(cross) >= 3000, f"the consumer freed {len(cross)} logged objects, fewer than the 3000 it was given")

out = os.path.join(directory, "python.pb.gz")
run([tool("jeprof2pprof"), log_path, dump_path, "-o", out])
_, samples, _ = pprof_raw(out)
half = len(samples) / 2 + 1  # each sample's value is rounded once
for name, want in (("alloc_objects", total_objects), ("alloc_space", total_bytes)):
    got = sum(s["by_type"][name] for s in samples)
    check(abs(got - want) <= half, f"pprof {name} {got}, the log says {want:.1f}")
got = sum(s["by_type"]["cross_thread_objects"] for s in samples)
want = sum(weight(a["usize"]) for a in allocations if uids[a["alloc_thread"]] != uids[a["free_thread"]])
check(abs(got - want) <= half, f"pprof cross_thread_objects {got}, the log says {want:.1f}")
got = sum(s["by_type"]["temporary_objects"] for s in samples)
want = sum(weight(a["usize"]) for a in allocations if a["free_timestamp"] - a["alloc_timestamp"] <= 1_000_000)
check(abs(got - want) <= half, f"pprof temporary_objects {got}, the log says {want:.1f}")
# The consumer's frees, by the bytearrays' allocating function.
resize = sum(s["by_type"]["cross_thread_objects"] for s in samples if s["frames"] and s["frames"][0] == "PyByteArray_Resize")
check(resize >= 3000, f"PyByteArray_Resize's cross-thread frees: {resize}")
print("ok")
