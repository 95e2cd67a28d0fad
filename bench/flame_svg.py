#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Times heapfold --svg against plain heapfold on large dumps, and measures the SVG.

Usage: bench/flame_svg.py [--build-dir build-release] [--runs 5] [--synthetic] [--keep DIR]

Inputs:
- million: the dump tests/e2e/test_large_input.py writes (1M stacks of 4 frames, 82 MiB,
  its program absent: run with --no-symbolize), the size issue 16 sets targets for
  (an SVG under 10 MB, in under 2 s);
- with --synthetic, synth-1Ms-20ka as bench/run.py makes it (1M stacks of 8 to 20 real
  frames of the generated C++ program, 290 MiB; building the program takes minutes),
  symbolized with a warm cache (the warm-up run makes its indexes: --index now).
Each row: the median of --runs timed runs after a warm-up, the two commands taking turns;
CPU = user + system and peak RSS from wait4 (bench/measured_run.c); then the output's size and, for
the SVG, the frames drawn of the frames in the graph (the others narrower than 0.1 px)."""

import argparse
import os
import re
import shutil
import sys
import tempfile

import inputs
from measure import Command, Job, Timing, measure, use_build

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def million_dump(path, stacks=1_000_000):
    """test_large_input.py's dump: `stacks` distinct 4-frame stacks of 4096 bytes each."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
    from synthetic_dump import write_synthetic_dump
    return write_synthetic_dump(path, stacks)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"),
                        help="heapkit's meson build directory (configure it with "
                             "-Dbuildtype=release for figures worth quoting)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs a row (default 5)")
    parser.add_argument("--synthetic", action="store_true",
                        help="also the 290 MiB synth-1Ms-20ka dump (builds the generated "
                             "C++ program first)")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it")
    return parser.parse_args()


def main():
    args = parse_args()
    heapfold = os.path.join(args.build_dir, "cmd", "heapfold")
    if not os.access(heapfold, os.X_OK):
        raise SystemExit(f"bench: needs {heapfold}: build it first")
    use_build(args.build_dir)
    work = args.keep or tempfile.mkdtemp(prefix="heapkit-flame-bench-")
    os.makedirs(work, exist_ok=True)
    cache = os.path.join(work, "cache")
    made = [("million", million_dump(os.path.join(work, "million.heap")), ["--no-symbolize"])]
    if args.synthetic:
        dump, program = inputs.cpp_program(work, quick=False)
        synth = inputs.synthetic(work, dump.dump, program, 1_000_000, 20_000)
        made.append((synth.name, synth.dump, []))
    timing = Timing(runs=args.runs, warmup=True, budget=120)
    print("| input | dump MiB | command | median s | min–max s | CPU s | peak RSS MiB | "
          "output MB | frames drawn |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, dump, flags in made:
        outputs = {"heapfold": os.path.join(work, f"{name}.folded"),
                   "heapfold --svg": os.path.join(work, f"{name}.svg")}
        jobs = [Job([Command([heapfold, "-q", *flags, *(["--svg"] if "svg" in label else []),
                              dump, "-o", out], env={"HEAPKIT_CACHE_DIR": cache, "HEAPKIT_INDEX": "now"})], timing)
                for label, out in outputs.items()]
        for (label, out), result in zip(outputs.items(), measure(jobs)):
            drawn = ""
            if out.endswith(".svg"):
                with open(out) as f:
                    comment = re.search(r"<!-- (\d+) of (\d+) frames drawn", f.read(4096))
                drawn = f"{int(comment.group(1)):,} of {int(comment.group(2)):,}"
            print(f"| {name} | {os.path.getsize(dump) / 2**20:.1f} | {label} "
                  f"{' '.join(flags)} | {result.median:.2f} | {min(result.wall):.2f}–"
                  f"{max(result.wall):.2f} | {result.cpu_median:.2f} | "
                  f"{result.peak_kib / 1024:.0f} | {os.path.getsize(out) / 1e6:.2f} | {drawn} |",
                  flush=True)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
