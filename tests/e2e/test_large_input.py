# SPDX-License-Identifier: MIT
"""A synthetic dump of one million stacks: both tools finish and their peak memory stays
within 1.25 times the input and 32 MiB (none of them holds a stack twice: the parser hands
each stack to the profile as it reads it, and the writers take the profile, not a copy;
before that it was about 2.1 times); no bound on time. heapfold --svg draws it in an SVG
under 10 MB, its narrow frames left out."""

import os
import resource
import subprocess

from heapkit_e2e import check, flame_frames, run, tool, workdir, write_synthetic_dump

STACKS = 1_000_000
directory = workdir()
dump = write_synthetic_dump(os.path.join(directory, "million.heap"), STACKS)
size = os.path.getsize(dump)

# Sanitized builds (CI runs the suite under ASan too) take about three times the memory.
sanitized = "libasan" in subprocess.run(["ldd", tool("heapfold")], capture_output=True,
                                        text=True).stdout
bound_kb = (5 * size // 4 + (32 << 20)) * (3 if sanitized else 1) // 1024

# What a user's run takes: meson test sets MALLOC_PERTURB_, with which glibc writes every
# allocation's bytes, and the untouched room of a buffer reserved to its bound (the pprof
# writer's) would count whole.
env = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}

for name in ("heapfold", "jeprof2pprof"):
    out = os.path.join(directory, f"{name}.out")
    run([tool(name), "-q", "--no-symbolize", "--sample", "alloc_space", dump, "-o", out], env=env)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"{name}: input {size >> 20} MiB, peak RSS so far {peak_kb >> 10} MiB, "
          f"bound {bound_kb >> 10} MiB")
    check(peak_kb <= bound_kb, f"{name} used {peak_kb} KiB for a {size}-byte dump")
    check(os.path.getsize(out) > 0, f"{name} wrote nothing")

with open(os.path.join(directory, "heapfold.out")) as f:
    values = [int(line.rpartition(" ")[2]) for line in f]
check(len(values) == STACKS, f"{len(values)} folded stacks, expected {STACKS}")

svg = os.path.join(directory, "heapfold.svg")
run([tool("heapfold"), "-q", "--no-symbolize", "--sample", "alloc_space", "--svg", dump, "-o", svg],
    env=env)
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
check(peak_kb <= bound_kb, f"heapfold --svg used {peak_kb} KiB for a {size}-byte dump")
svg_size = os.path.getsize(svg)
with open(svg) as f:
    frames = flame_frames(f.read())
print(f"heapfold --svg: {svg_size} bytes, {len(frames)} frames drawn")
check(svg_size < 10_000_000, f"the SVG of {STACKS} stacks takes {svg_size} bytes")
check(frames[0]["name"] == "all" and frames[0]["value"] == sum(values),
      f"the SVG's root {frames[0]['title']!r}, the folded stacks' total {sum(values)}")
print("ok")
