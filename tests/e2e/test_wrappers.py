# SPDX-License-Identifier: MIT
"""Allocation wrappers: the well-known ones (redis' zmalloc family: test_redis.py) are cut
by default; a program's own wrapper, under most of the bytes and reached from several
callers, is named with the --drop-frames that cuts it, and so is, in a stripped program,
a function without a name that calls malloc from many callers whatever its share;
--keep-allocator-frames keeps all."""

import os
import re
import shutil

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

# Stripped, both wrappers are addresses: app_alloc still holds most of the bytes; app_zalloc,
# 15 % from ten callers, is named too, for its callers.
stripped = os.path.join(directory, "wrapper-stripped")
shutil.copy(fixture("wrapper"), stripped)
run(["strip", stripped])
dump = run_fixture(stripped, directory)
stacks = heapfold(dump)
proc = run([tool("heapfold"), dump])
hints = [line for line in proc.stderr.splitlines() if "--drop-frames" in line]
check(len(hints) == 2, f"not two hints: {proc.stderr!r}")
check(re.match(r"heapfold: warning: wrapper-stripped!0x[0-9a-f]+ is the frame just above the "
               r"allocator under \d+% of inuse_space, called from 3 places", hints[0]),
      f"unexpected first hint: {hints[0]!r}")
match = re.match(r"heapfold: warning: (wrapper-stripped!0x[0-9a-f]+) is a function without a "
                 r"name that calls the allocator, under (\d+)% of inuse_space and called from "
                 r"10 places: most likely an allocation wrapper; --drop-frames '([^']+)' cuts it",
                 hints[1])
check(match, f"unexpected second hint: {hints[1]!r}")
zalloc, share, drop = match.groups()
zalloced = sum(v for s, v in stacks.items() if s.endswith(";" + zalloc))
check(int(share) == round(100 * zalloced / sum(stacks.values())) and 0 < int(share) < 50,
      f"{hints[1]!r}: {zalloc} holds {zalloced} of {sum(stacks.values())}")
wrapper = re.match(r"heapfold: warning: (\S+)", hints[0]).group(1)
proc = run([tool("heapfold"), "--drop-frames", f"{wrapper}|{drop}", dump])
check("--drop-frames" not in proc.stderr, f"hinted again: {proc.stderr!r}")
leaves = {}
for line in proc.stdout.splitlines():
    stack, _, value = line.rpartition(" ")
    leaves[stack.split(";")[-1]] = leaves.get(stack.split(";")[-1], 0) + int(value)
zalloc_callers = {s.split(";")[-2] for s in stacks if s.endswith(";" + zalloc)}
check(len(zalloc_callers) == 10 and all(leaves.get(c, 0) >= 8192 for c in zalloc_callers),
      f"app_zalloc's ten callers are not the leaves: {proc.stdout}")
print("ok")
