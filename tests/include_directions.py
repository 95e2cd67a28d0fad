#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The floors of lib/heapkit (docs/ARCHITECTURE.md), held against every #include "heapkit/..."
# line in it: a file includes its own part and lower floors only. Two parts on one floor
# stand side by side and include neither each other. An arrow back up fails, naming the
# file and line.
# Usage: include_directions.py SOURCE_ROOT
import pathlib
import re
import sys

# Bottom first. A part is a folder under lib/heapkit (its path) or a few files of runtime/'s
# own level (a name and their paths); a file belongs to the part of the longest path that
# begins its own.
FLOORS = [
    # pch/: the libraries' precompiled header, the standard library's and fmt's, no heapkit
    ["util/", "pch/"],
    ["read/"],
    ["unsample/"],
    ["model/"],
    ["symbolize/"],
    ["emit/"],
    ["stats/", "growth/"],
    ["report/"],  # heapfold --html: a series' growth is one of its views
    ["load/"],
    # the front door: heapkit.hpp, heapkit.cpp, and the tools' run behind it
    [("the front door", ["heapkit.", "tool.", "index_tool."])],
    # runtime/: its ground (the vocabulary, the process's jemalloc, notices), then the
    # folders, then the two front doors a service includes.
    [
        (
            "runtime/'s ground",
            [
                "runtime/request.",
                "runtime/jemalloc_copies.",
                "runtime/mallctl.",
                "runtime/profiler.",
                "runtime/telemetry.",
                "runtime/jemalloc_stats.",
                "runtime/notices.",
                "runtime/fragmentation_sampler.",
                "runtime/sample_table.",
            ],
        )
    ],
    ["runtime/guest/"],
    ["runtime/export/", "runtime/peaks/", "runtime/http/"],
    ["runtime/cpu/"],
    ["runtime/pages/"],
    [("runtime/'s front doors", ["runtime/handler.", "runtime/server."])],
    ["agent/"],
]

# Arrows downward that must never be drawn all the same: a page knows no server.
NEVER = [("runtime/pages/", "runtime/http/")]

INCLUDE = re.compile(r'^\s*#\s*include\s+"heapkit/([^"]+)"')


def part_of(path):
    """(floor, part) of a path under lib/heapkit, or None."""
    best = None
    for floor, parts in enumerate(FLOORS):
        for part in parts:
            name, paths = part if isinstance(part, tuple) else (part, [part])
            for start in paths:
                if path.startswith(start) and (best is None or len(start) > best[2]):
                    best = (floor, name, len(start))
    return best


def main():
    library = pathlib.Path(sys.argv[1]) / "lib" / "heapkit"
    problems = []
    files = sorted(p for p in library.rglob("*") if p.suffix in (".hpp", ".cpp", ".h", ".c"))
    for file in files:
        relative = file.relative_to(library).as_posix()
        source = part_of(relative)
        if source is None:
            problems.append(f"lib/heapkit/{relative}: on no floor: add it to {sys.argv[0]}")
            continue
        for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = part_of(match.group(1))
            if target is None:
                problems.append(f"lib/heapkit/{relative}:{number}: includes heapkit/"
                                f"{match.group(1)}, which is on no floor")
            elif (source[1], target[1]) in NEVER:
                problems.append(f"lib/heapkit/{relative}:{number}: includes heapkit/"
                                f"{match.group(1)}: {source[1]} may not include {target[1]}")
            elif target[1] != source[1] and target[0] >= source[0]:
                how = "beside it" if target[0] == source[0] else "above it"
                problems.append(f"lib/heapkit/{relative}:{number}: includes heapkit/"
                                f"{match.group(1)}: {target[1]} is {how} ({source[1]} is on "
                                f"floor {source[0] + 1}, {target[1]} on floor {target[0] + 1})")
    if not files:
        problems.append(f"{library}: no sources found")
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} include(s) against the floors (docs/ARCHITECTURE.md)")
        return 1
    print(f"ok: {len(files)} files, every include downward or within its part")
    return 0


if __name__ == "__main__":
    sys.exit(main())
