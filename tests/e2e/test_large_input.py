# SPDX-License-Identifier: MIT
"""A synthetic dump of one million stacks: both tools finish and their peak memory stays
proportional to the input (a generous bound on memory, none on time)."""

import os
import resource
import subprocess

from heapkit_e2e import check, run, tool, workdir, write_synthetic_dump

STACKS = 1_000_000
directory = workdir()
dump = write_synthetic_dump(os.path.join(directory, "million.heap"), STACKS)
size = os.path.getsize(dump)

# Sanitized builds (CI runs the suite under ASan too) take about three times the memory.
sanitized = "libasan" in subprocess.run(["ldd", tool("heapfold")], capture_output=True,
                                        text=True).stdout
bound_kb = (8 * size + (256 << 20)) * (3 if sanitized else 1) // 1024

for name in ("heapfold", "jeprof2pprof"):
    out = os.path.join(directory, f"{name}.out")
    run([tool(name), "-q", "--no-symbolize", "--sample", "alloc_space", dump, "-o", out])
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"{name}: input {size >> 20} MiB, peak RSS so far {peak_kb >> 10} MiB, "
          f"bound {bound_kb >> 10} MiB")
    check(peak_kb <= bound_kb, f"{name} used {peak_kb} KiB for a {size}-byte dump")
    check(os.path.getsize(out) > 0, f"{name} wrote nothing")

with open(os.path.join(directory, "heapfold.out")) as f:
    lines = sum(1 for _ in f)
check(lines == STACKS, f"{lines} folded stacks, expected {STACKS}")
print("ok")
