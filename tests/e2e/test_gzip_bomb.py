# SPDX-License-Identifier: MIT
"""Gzip input is inflated within bounds (issue 35, medium 5): 2 MB of concatenated gzip
members of zeros (2 GiB inflated) is refused at its first chunk as binary, and members of
dump text that inflate to 1.9 GiB, under the 2 GiB default but 200 times their size and
more, are refused as a bomb once past 64 MiB (issue 45, item 22: they were held whole,
1.9 GB, first), both with a message naming the file and under a 1 GiB address-space limit
(prlimit), by both tools and without an output file; --max-inflated and
HEAPKIT_MAX_INFLATED set the limit alone; a real gzipped dump converts as before."""

import gzip
import os

from heapkit_e2e import check, fixture, run, run_fixture, skip_if_sanitized, tool, workdir

skip_if_sanitized(tool("heapfold"), "the bombs are read under an address-space limit (prlimit)")

directory = workdir()
zeros = os.path.join(directory, "zeros.gz")
member = gzip.compress(b"\0" * (1 << 20), 9)
with open(zeros, "wb") as f:
    f.write(member * ((2 << 20) // len(member)))
text = os.path.join(directory, "text.gz")
head = b"heap_v2/524288\n  t*: 1: 4096 [1: 4096]\n"
lines = b"@ 0x7f0000001010 0x555500001000\n  t*: 1: 4096 [1: 4096]\n" * 20000  # ~1 MiB
member = gzip.compress(lines, 9)
with open(text, "wb") as f:
    f.write(gzip.compress(head) + member * 1900)  # 1.9 GiB inflated, ~300 times
check(os.path.getsize(zeros) < 3 << 20 and os.path.getsize(text) < 16 << 20,
      "the bombs are not small")


def bounded(*args, env=None):
    """A tool under a 1 GiB address-space limit: more memory than that fails it."""
    return run(["prlimit", f"--as={1 << 30}", *args], check=False, env=env)


for name in ("heapfold", "jeprof2pprof"):
    out = os.path.join(directory, f"{name}.out")
    for bomb, said in ((zeros, "zeros.gz: inflates to binary data, not text"),
                       (text, "text.gz: inflates more than 200 times its compressed size")):
        proc = bounded(tool(name), "--no-cache", bomb, "-o", out)
        check(proc.returncode == 1 and said in proc.stderr,
              f"{name} {bomb}: exit {proc.returncode}, {proc.stderr!r}")
        check("out of memory" not in proc.stderr, f"{name} {bomb} ran out of memory")
        check(not os.path.exists(out), f"{name} left an output for {bomb}")

proc = bounded(tool("heapfold"), "--no-cache", "--max-inflated", "16M", text)
check(proc.returncode == 1 and "more than 16 MiB" in proc.stderr, f"--max-inflated: {proc.stderr}")
proc = bounded(tool("heapfold"), "--no-cache", text,
               env=dict(os.environ, HEAPKIT_MAX_INFLATED="1M"))
check(proc.returncode == 1 and "more than 1 MiB" in proc.stderr,
      f"HEAPKIT_MAX_INFLATED: {proc.stderr}")

dump = run_fixture(fixture("alloc_c_pie"), directory)
with open(dump, "rb") as f:
    packed = os.path.join(directory, "dump.heap.gz")
    with open(packed, "wb") as g:
        g.write(gzip.compress(f.read()))
plain = run([tool("heapfold"), "--no-cache", dump]).stdout
check(run([tool("heapfold"), "--no-cache", "--max-inflated", "1M", packed]).stdout == plain,
      "a gzipped dump converts differently")
print("ok")
