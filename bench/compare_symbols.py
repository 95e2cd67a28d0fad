#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares heapkit's names with llvm-symbolizer's on the same unique addresses.

Usage: compare_symbols.py [--heapkit-bin DIR] DUMP [JEPROF2PPROF FLAGS...]

Converts DUMP with jeprof2pprof, reads every location back with go tool pprof -raw,
feeds the same addresses (as ELF vaddrs, per module, in one batch each) to
llvm-symbolizer --inlining, and reports every location that llvm-symbolizer names and
heapkit leaves unnamed or names differently. Prints both times. Exit 1 on a mismatch."""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

LOCATION = re.compile(r"^\s+(\d+): (0x[0-9a-f]+) M=(\d+) ?(.*)$")
LINE = re.compile(r"^(.*) (\S*):(-?\d+) s=(-?\d+)(\(.*\))?$")
MAPPING = re.compile(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S+)")


def pprof_locations(path):
    text = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", path],
                          capture_output=True, text=True, check=True).stdout
    locations, mappings, section, last = {}, {}, None, None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
        elif section == "Locations":
            match = LOCATION.match(line)
            if match:
                last = int(match.group(1))
                names = [LINE.match(match.group(4)).group(1)] if match.group(4) else []
                locations[last] = (int(match.group(2), 16), int(match.group(3)), names)
            elif line.strip():
                locations[last][2].append(LINE.match(line.strip()).group(1))
        elif section == "Mappings" and MAPPING.match(line):
            m = MAPPING.match(line)
            mappings[int(m.group(1))] = (int(m.group(2), 16), int(m.group(4), 16), m.group(5))
    return locations, mappings


def load_segments(path):
    """Executable PT_LOAD segments: (page-aligned first offset, end offset, vaddr - offset)."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    segments = []
    for m in re.finditer(r"LOAD\s+0x([0-9a-f]+) 0x([0-9a-f]+) 0x[0-9a-f]+ 0x([0-9a-f]+) "
                         r"0x[0-9a-f]+ ([RWE ]+)", out):
        offset, vaddr, size = (int(g, 16) for g in m.groups()[:3])
        if "E" in m.group(4):
            segments.append((offset & ~0xfff, offset + size, vaddr - offset))
    return segments


def llvm_names(path, vaddrs):
    """{vaddr: [names innermost first]} from one llvm-symbolizer run, and its seconds."""
    request = "".join(f"{hex(a)}\n" for a in vaddrs)
    start = time.perf_counter()
    out = subprocess.run(["llvm-symbolizer", "--inlining", "--functions=linkage", "--no-demangle",
                          f"--obj={path}"], input=request, capture_output=True, text=True).stdout
    seconds = time.perf_counter() - start
    # LLVM 14 demangles no Rust: demangle its linkage names with binutils' c++filt, which
    # reads Itanium C++, Rust legacy and Rust v0 (not timed: heapkit's time includes it).
    out = subprocess.run(["c++filt"], input=out, capture_output=True, text=True).stdout
    blocks = [b for b in out.split("\n\n") if b.strip()]
    names = {}
    for vaddr, block in zip(vaddrs, blocks):
        lines = block.strip().splitlines()
        # c++filt is verbose: it keeps Rust legacy hashes and v0 crate disambiguators.
        names[vaddr] = [re.sub(r"::h[0-9a-f]{16}$|\[[0-9a-f]+\]", "", n)
                        for n in lines[0::2] if n != "??"]
    return names, seconds


def alias_key(name):
    """Names of one entry point often differ only by glibc's internal prefixes."""
    return re.sub(r"^(__GI_)?_*", "", name)


def same_entry_aliases(path, ours, theirs):
    """True when the two outermost names are symbols at one address of `path` (aliases
    of one function, which each symbolizer picks by its own rule)."""
    if alias_key(ours) == alias_key(theirs):
        return True
    table = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                           text=True).stdout
    addresses = {}
    for line in table.splitlines():
        parts = line.split()
        if len(parts) == 3:
            addresses.setdefault(parts[2].split("@")[0], parts[0])
    return ours in addresses and addresses.get(ours) == addresses.get(theirs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--heapkit-bin", default=os.path.join(os.path.dirname(__file__), "..",
                                                              "build", "cmd"))
    parser.add_argument("dump")
    parser.add_argument("flags", nargs="*")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "profile.pb.gz")
        start = time.perf_counter()
        # drop_frames would make pprof trim allocator frames out of locations: keep them.
        subprocess.run([os.path.join(args.heapkit_bin, "jeprof2pprof"), "-q",
                        "--keep-allocator-frames", *args.flags,
                        args.dump, "-o", out], check=True)
        heapkit_seconds = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run([os.path.join(args.heapkit_bin, "jeprof2pprof"), "-q", "--no-symbolize",
                        args.dump, "-o", out + ".bare"], check=True)
        parse_seconds = time.perf_counter() - start
        locations, mappings = pprof_locations(out)

    by_module = {}
    for location_id, (address, mapping_id, names) in locations.items():
        if mapping_id not in mappings or mappings[mapping_id][2].startswith("["):
            continue
        start, offset, path = mappings[mapping_id]
        by_module.setdefault(path, []).append((address - start + offset, names, location_id))

    llvm_seconds, compared, mismatches, aliases = 0.0, 0, [], []
    for path, entries in sorted(by_module.items()):
        segments = load_segments(path)
        vaddrs = []
        for file_offset, _, _ in entries:
            delta = next((d for first, end, d in segments if first <= file_offset < end), None)
            vaddrs.append(None if delta is None else file_offset + delta)
        known = sorted({v for v in vaddrs if v is not None})
        names, seconds = llvm_names(path, known)
        llvm_seconds += seconds
        for (file_offset, ours, _), vaddr in zip(entries, vaddrs):
            theirs = names.get(vaddr, [])
            if not theirs:
                continue
            compared += 1
            if ours == theirs:
                continue
            if (ours and len(ours) == len(theirs) and ours[:-1] == theirs[:-1]
                    and same_entry_aliases(path, ours[-1], theirs[-1])):
                aliases.append((os.path.basename(path), ours[-1], theirs[-1]))
            else:
                mismatches.append((os.path.basename(path), file_offset, ours, theirs))

    print(f"locations named by llvm-symbolizer: {compared}; named differently by heapkit: "
          f"{len(mismatches)}; another alias of the same function: {len(aliases)}")
    for module, ours, theirs in sorted(set(aliases)):
        print(f"  alias in {module}: heapkit {ours!r}, llvm {theirs!r}")
    for module, offset, ours, theirs in mismatches[:20]:
        print(f"  {module}+{offset:#x}\n    heapkit: {ours}\n    llvm:    {theirs}")
    print(f"jeprof2pprof: {heapkit_seconds:.3f} s (--no-symbolize {parse_seconds:.3f} s); "
          f"llvm-symbolizer on the same addresses: {llvm_seconds:.3f} s")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
