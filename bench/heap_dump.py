# SPDX-License-Identifier: MIT
"""Reads what the benchmarks need from a jemalloc heap_v2 dump, streaming (the synthetic
ones reach hundreds of MB): its stacks, its mappings, the unique addresses heapkit looks
up, as ELF vaddrs per module, and the size of the debug info those modules carry."""

import bisect
import os
import re
import struct
import subprocess
from dataclasses import dataclass

from compare_symbols import load_segments

MAPS_LINE = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) ([0-9a-f]+) \S+ \d+\s*(.*)$")
# readelf -SW: [Nr] Name Type Address Off Size ES Flg Lk Inf Al
DEBUG_SECTION = re.compile(r"\]\s+\.debug_\S+\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+"
                           r"[0-9a-f]+\s+([A-Za-z]*)\s+\d")
BUILD_ID = re.compile(r"Build ID: ([0-9a-f]+)")


@dataclass
class Mapping:
    start: int  # runtime address
    end: int  # runtime address, exclusive
    perms: str
    offset: int  # file offset of `start`
    path: str


def stacks(path):
    """Yields every stack as its list of hex address strings, leaf first."""
    with open(path) as dump:
        for line in dump:
            if line.startswith("@"):
                yield line.split()[1:]


def mappings(path):
    """The dump's MAPPED_LIBRARIES lines, parsed; and their text, verbatim."""
    parsed, text, inside = [], [], False
    with open(path) as dump:
        for line in dump:
            if inside:
                text.append(line)
                match = MAPS_LINE.match(line)
                if match:
                    start, end, perms, offset, name = match.groups()
                    parsed.append(Mapping(int(start, 16), int(end, 16), perms, int(offset, 16),
                                          name.strip()))
            inside = inside or line.startswith("MAPPED_LIBRARIES:")
    return parsed, "".join(text)


def code_mappings(maps):
    """Executable mappings of real files, sorted by start."""
    return sorted((m for m in maps if "x" in m.perms and m.path.startswith("/")),
                  key=lambda m: m.start)


def scan_stacks(path):
    """(number of stacks, the unique runtime addresses heapkit looks up): every frame but
    the leaf is a return address, moved back by one into its call instruction."""
    count, leaves, returns = 0, set(), set()
    for frames in stacks(path):
        count += 1
        leaves.add(frames[0])
        returns.update(frames[1:])
    return count, {int(a, 16) for a in leaves} | {int(a, 16) - 1 for a in returns}


def module_vaddrs(maps, addresses):
    """{module path: sorted unique ELF vaddrs} of the runtime `addresses` that fall in an
    executable mapping of a file in `maps` (others, such as [vdso], go to no symbolizer)."""
    maps = code_mappings(maps)
    starts = [m.start for m in maps]
    file_offsets = {}
    for address in addresses:
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < maps[i].end:
            mapping = maps[i]
            file_offsets.setdefault(mapping.path, set()).add(address - mapping.start +
                                                              mapping.offset)
    return {module: to_vaddrs(module, offsets) for module, offsets in file_offsets.items()
            if os.path.exists(module)}


def to_vaddrs(module, file_offsets):
    """ELF vaddrs of file offsets, through the executable PT_LOAD segment holding each."""
    segments = load_segments(module)
    vaddrs = set()
    for offset in file_offsets:
        delta = next((d for first, end, d in segments if first <= offset < end), None)
        if delta is not None:
            vaddrs.add(offset + delta)
    return sorted(vaddrs)


def debug_file(module):
    """The separate debug file of `module` under /usr/lib/debug/.build-id, if any."""
    notes = subprocess.run(["readelf", "-n", module], capture_output=True, text=True).stdout
    match = BUILD_ID.search(notes)
    if not match:
        return None
    build_id = match.group(1)
    candidate = f"/usr/lib/debug/.build-id/{build_id[:2]}/{build_id[2:]}.debug"
    return candidate if os.path.exists(candidate) else None


def debug_info_bytes(modules):
    """Sum of the .debug_* section sizes of `modules` and of their separate debug files,
    uncompressed: a stand-in for the debug info a symbolizer touches."""
    total = 0
    for module in modules:
        for elf in filter(None, (module, debug_file(module))):
            sections = subprocess.run(["readelf", "-SW", elf], capture_output=True,
                                      text=True).stdout
            total += sum(section_size(elf, int(offset, 16), int(size, 16), "C" in flags)
                         for offset, size, flags in DEBUG_SECTION.findall(sections))
    return total


def section_size(elf, offset, size, compressed):
    """A section's size in memory: a compressed one (Debian's debug files) starts with an
    Elf64_Chdr whose ch_size, after ch_type and a reserved word, is its uncompressed size."""
    if not compressed:
        return size
    with open(elf, "rb") as f:
        f.seek(offset)
        return struct.unpack("<IIQ", f.read(16))[2]
