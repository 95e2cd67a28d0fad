#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes a synthetic, deterministic heap_v2 dump against a real binary's code.

Usage: gen_dump.py --like REAL_DUMP --binary BINARY --stacks N --addresses U [--seed S] OUT

REAL_DUMP is a dump of BINARY made under jemalloc; the synthetic one copies its header
rate, its MAPPED_LIBRARIES section (so addresses map into the real files) and the frames
of its real stacks on either side of the program's own (jemalloc and malloc leafward,
libc's start rootward). Between them go 4 to 16 frames drawn from U unique addresses
inside BINARY's functions (from `nm -S`), cycled so that every one of them is used when
N stacks have room. They are points inside functions, not the return addresses a real
stack holds: a symbolizer's work is the same. Counts vary per stack; two threads share
the stacks."""

import argparse
import random
import re
import shutil
import subprocess
import tempfile

import heap_dump
from compare_symbols import load_segments

SIZE_CLASSES = (16, 32, 48, 64, 96, 128, 256, 512, 1024, 4096)


def function_ranges(binary):
    """[(ELF vaddr, size)] of the binary's sized code symbols."""
    table = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True,
                           text=True, check=True).stdout
    ranges = set()
    for line in table.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW" and int(parts[1], 16) > 1:
            ranges.add((int(parts[0], 16), int(parts[1], 16)))
    return sorted(ranges)


def pick_vaddrs(rng, ranges, count):
    """`count` unique vaddrs spread over the functions, round robin in a shuffled order."""
    capacity = sum(size - 1 for _, size in ranges)
    if count > capacity:
        raise SystemExit(f"gen_dump: the binary has room for {capacity} addresses, not {count}")
    order = list(ranges)
    rng.shuffle(order)
    chosen = set()
    while len(chosen) < count:
        for start, size in order:
            chosen.add(start + rng.randrange(1, size))
            if len(chosen) == count:
                break
    return sorted(chosen)


def runtime_addresses(binary, vaddrs, maps):
    """Runtime addresses of ELF vaddrs, in the binary's executable mapping of the dump.
    (A vaddr outside the mapped part of the file would be a bug here: fail loudly.)"""
    segments = load_segments(binary)
    mapping = next(m for m in heap_dump.code_mappings(maps) if m.path == binary)
    out = []
    for vaddr in vaddrs:
        offset = next(vaddr - delta for first, end, delta in segments
                      if first <= vaddr - delta < end)
        assert mapping.offset <= offset < mapping.offset + mapping.end - mapping.start
        out.append(mapping.start + offset - mapping.offset)
    return out


def real_ends(dump, binary, maps):
    """The distinct (leafward frames, rootward frames) around the program's own frames in
    the real dump's stacks: the allocator's frames and the thread start."""
    mapping = next(m for m in heap_dump.code_mappings(maps) if m.path == binary)
    ends = set()
    for frames in heap_dump.stacks(dump):
        own = [i for i, a in enumerate(frames) if mapping.start <= int(a, 16) < mapping.end]
        if own:
            ends.add((" ".join(frames[:own[0]]), " ".join(frames[own[-1] + 1:])))
    return sorted(ends)


def header_rate(dump):
    with open(dump) as f:
        match = re.match(r"heap_v2/(\d+)", f.readline())
    return int(match.group(1))


def write_stacks(out, rng, hexes, ends, stacks):
    """Writes the @ lines and their counts to `out`; returns the per-thread totals
    [cur objects, cur bytes, accum objects, accum bytes]."""
    totals = [[0, 0, 0, 0], [0, 0, 0, 0]]
    order, used = list(range(len(hexes))), len(hexes)
    for _ in range(stacks):
        depth = rng.randint(4, 16)
        if used + depth > len(order):
            rng.shuffle(order)
            used = 0
        leafward, rootward = rng.choice(ends)
        frames = [leafward, *(hexes[i] for i in order[used:used + depth]), rootward]
        used += depth
        size = rng.choice(SIZE_CLASSES)
        objects = rng.randint(0, 4)
        accum = objects + rng.randint(1, 3)
        values = (objects, objects * size, accum, accum * size)
        thread = rng.randrange(2)
        out.write("@ " + " ".join(filter(None, frames)) + "\n" + count_line("t*", values) +
                  count_line(f"t{thread}", values))
        totals[thread] = [t + v for t, v in zip(totals[thread], values)]
    return totals


def count_line(label, values):
    return f"  {label}: {values[0]}: {values[1]} [{values[2]}: {values[3]}]\n"


def generate(like, binary, stacks, addresses, seed, out):
    rng = random.Random(seed)
    maps, maps_text = heap_dump.mappings(like)
    vaddrs = pick_vaddrs(rng, function_ranges(binary), addresses)
    hexes = [f"0x{a:x}" for a in runtime_addresses(binary, vaddrs, maps)]
    # The header holds the totals: stacks go to a side file first, then after it.
    with tempfile.TemporaryFile("w+") as body:
        threads = write_stacks(body, rng, hexes, real_ends(like, binary, maps), stacks)
        everything = [sum(column) for column in zip(*threads)]
        body.seek(0)
        with open(out, "w") as f:
            f.write(f"heap_v2/{header_rate(like)}\n" + count_line("t*", everything) +
                    count_line("t0", threads[0]) + count_line("t1", threads[1]))
            shutil.copyfileobj(body, f)
            f.write("\nMAPPED_LIBRARIES:\n" + maps_text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--like", required=True, help="a real dump of BINARY")
    parser.add_argument("--binary", required=True, help="as its path appears in the dump")
    parser.add_argument("--stacks", type=int, required=True)
    parser.add_argument("--addresses", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("out")
    args = parser.parse_args()
    generate(args.like, args.binary, args.stacks, args.addresses, args.seed, args.out)


if __name__ == "__main__":
    main()
