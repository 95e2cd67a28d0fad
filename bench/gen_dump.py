#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes a synthetic, deterministic heap_v2 dump against a real binary's code.

Usage: gen_dump.py --like REAL_DUMP --binary BINARY --stacks N --addresses U [--seed S] OUT
       gen_dump.py --like REAL_DUMP --binary BINARY --stacks N --big reuse|unique OUT

REAL_DUMP is a dump of BINARY made under jemalloc; the synthetic one copies its header
rate, its MAPPED_LIBRARIES section (so addresses map into the real files) and the frames
of its real stacks on either side of the program's own (jemalloc and malloc leafward,
libc's start rootward). Between them go 4 to 16 frames drawn from U unique addresses
inside BINARY's functions (from `nm -S`), cycled so that every one of them is used when
N stacks have room. They are points inside functions, not the return addresses a real
stack holds: a symbolizer's work is the same. Counts vary per stack; two threads share
the stacks."""

import argparse
import bisect
import collections
import itertools
import math
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
        write_dump(out, like, threads, body, maps_text)


# --big: frames per stack under the allocator's leaf frame, and the shape of the reuse case.
BIG_DEPTHS = (1, 2, 2, 3, 3, 4)
REUSE_FUNCTIONS, REUSE_SITES = 3000, 4
BIG_CHUNK = 100_000  # stacks written per join
JIT_START = 0x7e0000000000  # the unique case's anonymous code, where no mapping of ours is


def reuse_addresses(rng, binary, maps, ranges):
    """The reuse case's call sites, as hex strings: REUSE_SITES in each of
    REUSE_FUNCTIONS functions."""
    functions = rng.sample(ranges, min(REUSE_FUNCTIONS, len(ranges)))
    count = min(REUSE_FUNCTIONS * REUSE_SITES, sum(size - 1 for _, size in functions))
    return [f"0x{a:x}" for a in
            runtime_addresses(binary, pick_vaddrs(rng, functions, count), maps)]


class UniqueAddresses:
    """`count` distinct runtime addresses: every byte inside the binary's functions but
    their first, then, past those, an anonymous executable mapping at JIT_START (JIT code:
    no file names it), which `jit_line` describes for the maps. Taken in an order spread
    over all of them: an affine permutation of their indexes, no list of tens of millions."""

    def __init__(self, binary, maps, ranges, count):
        starts = runtime_addresses(binary, [start for start, _ in ranges], maps)
        self.firsts, self.spans, total, covered = [], [], 0, 0
        for start, (_, size) in zip(starts, ranges):  # by vaddr; aliases overlap
            first = max(start + 1, covered)
            if first < start + size:
                self.firsts.append(total)
                self.spans.append(first)
                total += start + size - first
                covered = start + size
        self.jit_line = ""
        if count > total:
            if any(m.start < JIT_START + count and JIT_START < m.end for m in maps):
                raise SystemExit(f"gen_dump: the dump maps something at {JIT_START:#x}")
            pages = (count - total + 4095) // 4096 * 4096
            self.jit_line = f"{JIT_START:x}-{JIT_START + pages:x} r-xp 00000000 00:00 0 \n"
            self.firsts.append(total)
            self.spans.append(JIT_START)
        self.count = count
        self.step = next(s for s in itertools.count(int(count * 0.618) or 1)
                         if math.gcd(s, count) == 1)

    def hexes(self, first, end):
        """The addresses of indexes [first, end), as hex strings."""
        out = []
        for i in range(first, end):
            j = i * self.step % self.count
            k = bisect.bisect_right(self.firsts, j) - 1
            out.append(f"0x{self.spans[k] + j - self.firsts[k]:x}")
        return out


def big_count_lines():
    """Every (count lines text, thread, values) a big dump's stack can carry."""
    shapes = []
    for size, objects, extra, thread in itertools.product(SIZE_CLASSES, range(5), range(1, 4),
                                                          range(2)):
        accum = objects + extra
        values = (objects, objects * size, accum, accum * size)
        shapes.append((count_line("t*", values) + count_line(f"t{thread}", values), thread,
                       values))
    return shapes


def write_big_stacks(out, rng, frames_of, leaves, all_depths):
    """generate_big's stack lines, in chunks of joined text; `frames_of(first, end)` gives
    the frames [first, end) of the dump. Returns the per-thread totals as write_stacks
    does."""
    shapes = big_count_lines()
    used = collections.Counter()
    next_frame = 0
    for first in range(0, len(all_depths), BIG_CHUNK):
        depths = all_depths[first:first + BIG_CHUNK]
        n = len(depths)
        frames = frames_of(next_frame, next_frame + sum(depths))
        next_frame += len(frames)
        chosen = rng.choices(range(len(shapes)), k=n)
        used.update(chosen)
        lines, at = [], 0
        for depth, leaf, shape in zip(depths, rng.choices(leaves, k=n), chosen):
            lines.append(f"@ {leaf} {' '.join(frames[at:at + depth])}\n{shapes[shape][0]}")
            at += depth
        out.write("".join(lines))
    totals = [[0, 0, 0, 0], [0, 0, 0, 0]]
    for shape, times in used.items():
        _, thread, values = shapes[shape]
        totals[thread] = [t + v * times for t, v in zip(totals[thread], values)]
    return totals


def generate_big(like, binary, stacks, kind, seed, out):
    """A big dump (see --big) of `stacks` stacks, `kind` "reuse" or "unique"."""
    rng = random.Random(seed)
    maps, maps_text = heap_dump.mappings(like)
    ranges = function_ranges(binary)
    depths = rng.choices(BIG_DEPTHS, k=stacks)
    if kind == "unique":
        unique = UniqueAddresses(binary, maps, ranges, sum(depths))
        frames_of = unique.hexes
        maps_text = with_line(maps_text, unique.jit_line)
    else:
        hexes = reuse_addresses(rng, binary, maps, ranges)
        frames_of = lambda first, end: rng.choices(hexes, k=end - first)  # noqa: E731
    # Leafward from the program's frames sits the allocator's frame (the real dump's).
    leaves = sorted({leafward.split()[0] for leafward, _ in real_ends(like, binary, maps)
                     if leafward}) or ["0x1"]
    with tempfile.TemporaryFile("w+") as body:
        threads = write_big_stacks(body, rng, frames_of, leaves, depths)
        write_dump(out, like, threads, body, maps_text)


def with_line(maps_text, line):
    """`maps_text` with `line` (may be empty) in its place: /proc/self/maps is sorted."""
    if not line:
        return maps_text
    lines = maps_text.splitlines(keepends=True)
    start = int(line.split("-")[0], 16)
    at = next((i for i, old in enumerate(lines)
               if re.match(r"[0-9a-f]+-", old) and int(old.split("-")[0], 16) > start),
              len(lines))
    return "".join(lines[:at] + [line] + lines[at:])


def write_dump(out, like, threads, body, maps_text):
    """The header with the threads' totals, the stacks from `body`, then the maps."""
    everything = [sum(column) for column in zip(*threads)]
    body.seek(0)
    with open(out, "w") as f:
        f.write(f"heap_v2/{header_rate(like)}\n" + count_line("t*", everything) +
                count_line("t0", threads[0]) + count_line("t1", threads[1]))
        shutil.copyfileobj(body, f, 1 << 20)
        f.write("\nMAPPED_LIBRARIES:\n" + maps_text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--like", required=True, help="a real dump of BINARY")
    parser.add_argument("--binary", required=True, help="as its path appears in the dump")
    parser.add_argument("--stacks", type=int, required=True)
    parser.add_argument("--addresses", type=int)
    parser.add_argument("--big", choices=("reuse", "unique"),
                        help="a big dump's compact shape (issue 37), instead of --addresses")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("out")
    args = parser.parse_args()
    if (args.addresses is None) == (args.big is None):
        parser.error("give either --addresses or --big")
    if args.big:
        generate_big(args.like, args.binary, args.stacks, args.big, args.seed, args.out)
    else:
        generate(args.like, args.binary, args.stacks, args.addresses, args.seed, args.out)


if __name__ == "__main__":
    main()
