#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 43's rows: naming an unsymbolized pprof (the shape rust-jemalloc-pprof writes:
mappings, no functions; made here with jeprof2pprof --no-symbolize from the benchmark's
own dumps), by jeprof2pprof (cold and warm cache) and by go tool pprof -symbolize=local
(which runs addr2line or llvm-symbolizer over the mappings' files), in the same rounds.
For each output: the share of locations that have a mapping and got a name, and how
many of those have the inline chain of files and lines llvm-symbolizer gives (ground
truth, asked once per file for all its addresses).

Usage: bench/pprof_names.py [--build-dir build] [--runs 3] [--inputs cpp,cpython,curl]"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import inputs
from measure import Command, Job, Timing, measure, use_build
from tools import find_tools, fresh_directory

LOCATION = re.compile(r"^\s+(\d+): (0x[0-9a-f]+) M=(\d+) ?(.*)$")
LINE = re.compile(r"^(.*) (\S*):(-?\d+) s=(-?\d+)(\(.*\))?$")
MAPPING = re.compile(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S+)")


def raw_locations(path):
    """{id: (address, mapping id, [(file, line)])} and {mapping id: (start, offset, file)}
    of go tool pprof -raw (which names nothing itself: -symbolize=none)."""
    env = dict(os.environ, PPROF_TMPDIR=tempfile.gettempdir())
    text = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", path], env=env,
                          capture_output=True, text=True, check=True).stdout
    locations, mappings, section, last = {}, {}, None, None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Locations":
            match = LOCATION.match(line)
            if match:
                last = int(match.group(1))
                locations[last] = (int(match.group(2), 16), int(match.group(3)), [])
                line = match.group(4)
            # " name file:line s=start": a line without a function has an empty name
            named = LINE.match(" " + line.strip())
            if named and last is not None:
                locations[last][2].append((named.group(1).strip(),
                                           os.path.basename(named.group(2)),
                                           int(named.group(3))))
        elif section == "Mappings":
            match = MAPPING.match(line)
            if match:
                mappings[int(match.group(1))] = (int(match.group(2), 16), int(match.group(4), 16),
                                                 match.group(5))
    return locations, mappings


def segments(path):
    """(file offset, vaddr, size) of each PT_LOAD segment."""
    headers = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    return [tuple(int(g, 16) for g in m.groups()) for m in re.finditer(
        r"LOAD\s+0x([0-9a-f]+) 0x([0-9a-f]+) 0x[0-9a-f]+ 0x([0-9a-f]+)", headers)]


def llvm_chains(path, vaddrs):
    """{vaddr: [(file, line)]} as llvm-symbolizer names them, innermost first."""
    out = subprocess.run(["llvm-symbolizer", "--inlining", f"--obj={path}"],
                         input="\n".join(hex(v) for v in vaddrs) + "\n", capture_output=True,
                         text=True).stdout
    chains = {}
    for vaddr, block in zip(vaddrs, out.split("\n\n")):
        lines = block.strip().splitlines()
        chain = []
        for name, where in zip(lines[0::2], lines[1::2]):
            file, line = where.rsplit(":", 2)[0], int(where.rsplit(":", 2)[1])
            if name != "??":
                chain.append((os.path.basename(file).replace("??", ""), line))
        chains[vaddr] = chain
    return chains


def named_share(path, truth_cache):
    """(locations with a mapping, named (a function name), with the inline chain of files
    and lines llvm-symbolizer gives)."""
    locations, mappings = raw_locations(path)
    mapped = [(a, m, lines) for a, m, lines in locations.values() if m in mappings]
    by_file = {}
    for address, mapping, lines in mapped:
        start, offset, file = mappings[mapping]
        by_file.setdefault(file, []).append((address - start + offset, lines))
    named = agree = 0
    for file, entries in by_file.items():
        if not os.path.isfile(file):
            continue
        loads = segments(file)
        vaddr_of = {}
        for file_offset, _ in entries:
            for seg_offset, vaddr, size in loads:
                if seg_offset <= file_offset < seg_offset + size:
                    vaddr_of[file_offset] = vaddr + file_offset - seg_offset
        wanted = [v for v in vaddr_of.values() if (file, v) not in truth_cache]
        for vaddr, chain in llvm_chains(file, wanted).items() if wanted else ():
            truth_cache[(file, vaddr)] = chain
        for file_offset, lines in entries:
            if not lines:
                continue
            named += any(name for name, _, _ in lines)
            truth = truth_cache.get((file, vaddr_of.get(file_offset)))
            agree += truth is not None and [(f, n) for _, f, n in lines] == truth
    return len(mapped), named, agree


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--inputs", default="cpp,cpython,curl")
    parser.add_argument("--keep", metavar="DIR", help="make the inputs and outputs in DIR "
                                                      "and keep them")
    args = parser.parse_args()
    build = os.path.abspath(args.build_dir)
    found = find_tools(build)
    use_build(build)
    work = args.keep or tempfile.mkdtemp(prefix="heapkit-pprof-names-")
    os.makedirs(work, exist_ok=True)
    try:
        makers = {"cpp": lambda: inputs.cpp_program(work, False)[0],
                  "cpython": lambda: inputs.cpython(work), "curl": lambda: inputs.distro(work)}
        rows = []
        for name in args.inputs.split(","):
            item = makers[name]()
            unnamed = os.path.join(work, f"{item.name}.unnamed.pb.gz")
            subprocess.run([found.jeprof2pprof, "-q", "--no-symbolize", item.dump, "-o", unnamed],
                           check=True)
            cache = os.path.join(work, f"{item.name}.cache")
            warm_cache = os.path.join(work, f"{item.name}.warm")
            outs = {k: os.path.join(work, f"{item.name}.{k}.pb.gz") for k in ("cold", "warm", "go")}

            def ours(kind, cache_dir):
                return Command([found.jeprof2pprof, "-q", unnamed, "-o", outs[kind]], check=False,
                               env={"HEAPKIT_CACHE_DIR": cache_dir, "HEAPKIT_INDEX": "never"})

            def warmed():
                if not os.path.isdir(warm_cache):
                    fresh_directory(warm_cache)
                    subprocess.run([found.jeprof2pprof, "-q", unnamed, "-o", outs["warm"]],
                                   env=dict(os.environ, HEAPKIT_CACHE_DIR=warm_cache,
                                            HEAPKIT_INDEX="now"))

            go = Command(["go", "tool", "pprof", "-symbolize=local", "-proto", "-output",
                          outs["go"], unnamed], env={"PPROF_TMPDIR": work, "HOME": work})
            timing = Timing(args.runs, True, 60)
            jobs = [Job([ours("cold", cache)], timing, lambda: fresh_directory(cache)),
                    Job([ours("warm", warm_cache)], timing, warmed),
                    Job([go], Timing(1, False, 600))]
            results = measure(jobs)
            truth = {}
            shares = {k: named_share(outs[k], truth) for k in outs}
            rows.append((item, os.path.getsize(unnamed), results, shares))
            print(f"bench: {item.name} done", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("| unsymbolized pprof | namer | CPU s | wall s | peak RSS MiB | named / with a mapping "
          "| files and lines as llvm-symbolizer's |")
    print("|---|---|---|---|---|---|---|")
    for item, size, results, shares in rows:
        labels = ("jeprof2pprof, cold cache", "jeprof2pprof, warm cache",
                  "go tool pprof -symbolize=local")
        for label, result, kind in zip(labels, results, ("cold", "warm", "go")):
            mapped, named, agree = shares[kind]
            print(f"| {item.name} ({size / 1024:.0f} kB) | {label} | {result.cpu_median:.3f} | "
                  f"{result.median:.3f} | {result.peak_kib / 1024:.0f} | {named} / {mapped} | "
                  f"{agree} |")
        go_cpu = results[2].cpu_median
        print(f"| | CPU ratio go / heapkit | cold {go_cpu / results[0].cpu_median:.0f}x, "
              f"warm {go_cpu / results[1].cpu_median:.0f}x | | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
