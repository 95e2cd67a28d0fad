# SPDX-License-Identifier: MIT
"""Debian's CPython, a glibc-malloc program, under
LD_PRELOAD="libjemalloc.so.2 libheapkit-agent.so" (PYTHONMALLOC=malloc: every object from
jemalloc): the heap profile names the interpreter's functions and holds what the script
says it holds; a CPU profile names the interpreter's evaluation loop."""

import os
import sys
import threading

from agent_e2e import AGENT_SO, JEMALLOC_SO, Guest, fetch
from heapkit_e2e import check, go_pprof, pprof_raw, pprof_total, workdir

python = "/usr/bin/python3"
if not os.path.exists(python):
    print("/usr/bin/python3 not installed (Debian: python3): skipping")
    sys.exit(77)

directory = workdir()
# 20000 bytearrays of 4000 bytes: 80 MB made by bytearray's C code, then a busy loop.
script = """
import sys
held = [bytearray(4000) for _ in range(20000)]
print(len(held), flush=True)
total = 0
while sys.stdin.readline():
    for i in range(200000):
        total += i * i
    print(total, flush=True)
"""
guest = Guest([python, "-c", script], preload=[JEMALLOC_SO, AGENT_SO], stdin=True, stdout=True,
              env={"MALLOC_CONF": "prof:true,lg_prof_sample:14", "PYTHONMALLOC": "malloc"})
try:
    check(guest.process.stdout.readline().strip() == "20000", "the script did not start")
    url = guest.url()
    heap = fetch(url, "/debug/pprof/heap", os.path.join(directory, "heap.pb.gz"))
    _, samples, _ = pprof_raw(heap)
    arrays = pprof_total(samples, "inuse_space", lambda f: "PyByteArray_Resize" in f)
    check(0.9 * 20000 * 4000 <= arrays <= 1.1 * 20000 * 4096,
          f"PyByteArray_Resize holds {arrays} bytes, the script made 80 MB")
    # The CPU profile, while the interpreter works (each line on stdin: one busy round).
    def feed():
        for _ in range(400):
            try:
                guest.process.stdin.write("go\n")
                guest.process.stdin.flush()
                guest.process.stdout.readline()
            except (BrokenPipeError, ValueError):
                return

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    cpu = fetch(url, "/debug/pprof/profile?seconds=2", os.path.join(directory, "cpu.pb.gz"))
    top = go_pprof("-top", "-symbolize=none", cpu).stdout
    check("_PyEval_EvalFrameDefault" in top, f"the CPU profile has no eval loop:\n{top[:2000]}")
    print(f"python: bytearrays {arrays} bytes; CPU profile names the eval loop")
finally:
    guest.process.stdin.close()
    guest.stop()
print("ok")
