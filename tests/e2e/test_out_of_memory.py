# SPDX-License-Identifier: MIT
"""A failed allocation ends a tool like any other error: "<tool>: error: out of memory",
exit status 1, and no output file, finished or temporary. Reached two ways: an address
space limit (ulimit -v) too small for a large dump, and a preloaded allocator that fails
from a chosen call on (after heapfold created its temporary output; inside
jeprof2pprof's gzip)."""

import os
import resource
import subprocess
import sys

from heapkit_e2e import write_synthetic_dump, FIXTURE_DIR, check, fixture, run, run_fixture, tool, workdir

# ASan reserves terabytes of address space and must come first among preloaded libraries.
if "libasan" in subprocess.run(["ldd", tool("heapfold")], capture_output=True,
                               text=True).stdout:
    print("sanitizer build: neither an address space limit nor a preloaded allocator fits; "
          "skipping")
    sys.exit(77)

LIMIT = 96 << 20  # bytes of address space: a small dump needs under 40 MiB here, a million stacks over 150
STACKS = 1_000_000


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def failed_cleanly(proc, name, directory, expected_files):
    check(proc.returncode == 1 and f"{name}: error: out of memory" in proc.stderr,
          f"{name}: exit {proc.returncode}, stderr {proc.stderr!r}")
    left = sorted(os.listdir(directory))
    check(left == sorted(expected_files), f"{name} left files behind: {left}")


# A small dump converts within the limit: the limit leaves the tools room to work.
directory = workdir()
small = run_fixture(fixture("alloc_c_pie"), directory)
for name in ("heapfold", "jeprof2pprof"):
    out = os.path.join(directory, f"small.{name}")
    proc = subprocess.run([tool(name), "-q", small, "-o", out], capture_output=True, text=True,
                          preexec_fn=limited, timeout=60,
                          env=dict(os.environ, HEAPKIT_CACHE_DIR=workdir()))
    check(proc.returncode == 0, f"{name} under the limit, small dump: {proc.stderr!r}")

# A dump of a million stacks does not fit.
directory = workdir()
dump = write_synthetic_dump(os.path.join(directory, "million.heap"), STACKS)
for name in ("heapfold", "jeprof2pprof"):
    proc = subprocess.run([tool(name), "-q", "--no-symbolize", dump, "-o",
                           os.path.join(directory, "out")], capture_output=True, text=True,
                          preexec_fn=limited, timeout=60)
    failed_cleanly(proc, name, directory, ["million.heap"])

# Allocations fail once heapfold has created its temporary output, and once
# jeprof2pprof starts compressing.
preload = os.path.join(FIXTURE_DIR, "libfail_alloc.so")
for name, trigger in (("heapfold", "mkstemp"), ("jeprof2pprof", "deflateInit2_")):
    directory = workdir()
    dump = run_fixture(fixture("alloc_c_pie"), directory)
    env = dict(os.environ, LD_PRELOAD=preload, HEAPKIT_FAIL_ALLOC_AFTER=trigger)
    # --no-cache: the frame cache's files are made with mkstemp too.
    proc = run([tool(name), "-q", "--no-cache", dump, "-o", os.path.join(directory, "out")],
               check=False, env=env)
    failed_cleanly(proc, name, directory, [os.path.basename(dump)])
print("ok")
