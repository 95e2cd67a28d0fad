# SPDX-License-Identifier: MIT
"""Allocation wrappers: the well-known ones (redis' zmalloc family: test_redis.py) are cut
by default; a program's own wrapper, under most of the bytes and reached from several
callers, is named with the --drop-frames that cuts it; --keep-allocator-frames keeps all."""

import re

from heapkit_e2e import check, fixture, heapfold, run, run_fixture, tool, workdir

directory = workdir()
dump = run_fixture(fixture("wrapper"), directory)

proc = run([tool("heapfold"), dump])
hints = [line for line in proc.stderr.splitlines() if "--drop-frames" in line]
check(len(hints) == 1, f"not one hint: {proc.stderr!r}")
# 112 x 4 KiB through app_alloc, from three callers; the rest (libc's start-up) is small.
match = re.match(r"heapfold: warning: app_alloc is the frame just above the allocator under "
                 r"(\d+)% of inuse_space, called from 3 places: if it only allocates for its "
                 r"callers, --drop-frames 'app_alloc' cuts it", hints[0])
check(match, f"unexpected hint: {hints[0]!r}")
stacks = heapfold(dump)
wrapped = sum(v for s, v in stacks.items() if s.endswith(";app_alloc"))
check(wrapped == 112 * 4096, f"app_alloc holds {wrapped} bytes, the fixture keeps {112 * 4096}")
check(int(match.group(1)) == round(100 * wrapped / sum(stacks.values())),
      f"{hints[0]!r}: app_alloc holds {wrapped} of {sum(stacks.values())}")

# Taking the advice: the callers are the leaves, and nothing more is hinted.
proc = run([tool("heapfold"), "--drop-frames", "app_alloc", dump])
check("--drop-frames" not in proc.stderr, f"hinted again: {proc.stderr!r}")
leaves = {}
for line in proc.stdout.splitlines():
    stack, _, value = line.rpartition(" ")
    leaves[stack.split(";")[-1]] = leaves.get(stack.split(";")[-1], 0) + int(value)
for function, pages in (("load_config", 64), ("open_sessions", 32), ("fill_cache", 16)):
    check(leaves.get(function) == pages * 4096, f"{function}: {leaves.get(function)} bytes")

# --keep-allocator-frames: malloc is the leaf, no hint.
proc = run([tool("heapfold"), "--keep-allocator-frames", dump])
check("--drop-frames" not in proc.stderr, f"hint with the allocator kept: {proc.stderr!r}")
print("ok")
