#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What --growth costs: synthetic series of DUMPS dumps of STACKS stacks each (a tenth of
the stacks leak, the rest hold steady), a second apart; times heapfold --growth (the
table and --svg) and jeprof2pprof --growth against heapfold on each dump alone, with
--no-symbolize so that only the series' own work is measured. Prints a table: median
wall and CPU seconds, peak RSS.

    bench/growth_series.py --build-dir build-release [--dumps 12] [--stacks 100000]
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import Command, Job, Timing, measure, use_build  # noqa: E402


def write_series(directory, dumps, stacks):
    """jeprof.<pid>.<seq>.i<n>.heap files, mtimes a second apart; returns their paths."""
    paths = []
    for d in range(dumps):
        path = os.path.join(directory, f"jeprof.4242.{d}.i{d}.heap")
        with open(path, "w") as f:
            lines = []
            total = 0
            for i in range(stacks):
                count = d + 1 if i % 10 == 0 else 1 + (i % 3)
                total += count
                lines.append(f"@ 0x7f0000001010 0x{0x555500001000 + (i % 4093) * 16:x} "
                             f"0x{0x555500002000 + (i // 4093) * 16:x} 0x555500003000\n"
                             f"  t*: {count}: {count * 4096} [{count}: {count * 4096}]\n")
            f.write(f"heap_v2/524288\n  t*: {total}: {total * 4096} [{total}: {total * 4096}]\n")
            f.writelines(lines)
            f.write("\nMAPPED_LIBRARIES:\n"
                    "555500000000-555500010000 r-xp 00000000 fe:00 1  /nonexistent/app\n")
        stamp = 1_700_000_000 + d
        os.utime(path, (stamp, stamp))
        paths.append(path)
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--dumps", type=int, default=12)
    parser.add_argument("--stacks", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    use_build(args.build_dir)
    tools = os.path.join(args.build_dir, "cmd")
    with tempfile.TemporaryDirectory(prefix="growth-bench-") as directory:
        dumps = write_series(directory, args.dumps, args.stacks)
        size = sum(os.path.getsize(d) for d in dumps) >> 20
        common = ["-q", "--no-symbolize", "--no-cache"]
        out = os.path.join(directory, "out")
        jobs = {
            "heapfold, each dump alone": [
                Command([os.path.join(tools, "heapfold"), *common, d], stdout=out) for d in dumps],
            "heapfold --growth": [
                Command([os.path.join(tools, "heapfold"), *common, "--growth", *dumps],
                        stdout=out)],
            "heapfold --growth --svg": [
                Command([os.path.join(tools, "heapfold"), *common, "--growth", "--svg", *dumps],
                        stdout=out)],
            "jeprof2pprof --growth": [
                Command([os.path.join(tools, "jeprof2pprof"), *common, "--growth", *dumps,
                         "-o", out])],
        }
        timing = Timing(runs=args.runs, warmup=True, budget=120)
        results = measure([Job(commands, timing) for commands in jobs.values()])
        print(f"{args.dumps} dumps of {args.stacks} stacks ({size} MiB in all), "
              f"--no-symbolize; median of {args.runs} runs after a warm-up")
        print(f"| {'command':<27} | wall s | CPU s  | peak RSS MiB |")
        print(f"|{'-' * 29}|--------|--------|--------------|")
        for name, result in zip(jobs, results):
            print(f"| {name:<27} | {result.median:6.2f} | {result.cpu_median:6.2f} | "
                  f"{result.peak_kib >> 10:12} |")


if __name__ == "__main__":
    main()
