# SPDX-License-Identifier: MIT
"""Rust programs (std only, system malloc = preloaded jemalloc), legacy and v0 mangling:
names demangled without hashes, allocation shims cut, and then the standard library's
frames at the leaf end (Vec::with_capacity_in, alloc::vec::from_elem, <u8 as
SpecFromElem>::from_elem, Box::new, hashbrown's reserve_rehash): the program's own functions
are the leaves and the flat leaders of heapfold --text and go tool pprof -top, and
--keep-allocator-frames brings the standard frames back. Rust's start-up frames stay at the
root. Skipped (77) without rustc."""

import os
import re
import shutil
import sys

from heapkit_e2e import (SOURCE_DIR, check, check_near, go_pprof, pprof_raw, run, run_fixture,
                         tool, heapfold, workdir)

if shutil.which("rustc") is None:
    print("SKIP: rustc is not installed (Debian package rustc; tests/install-packages.sh leaves it "
          "out)")
    sys.exit(77)

STANDARD = re.compile(r"^(<)?(std|core|alloc|hashbrown)::|^__r(ust|dl|g)_")
source = os.path.join(SOURCE_DIR, "fixtures", "rust_fixture.rs")
for mangling in ("legacy", "v0"):
    directory = workdir()
    program = os.path.join(directory, f"rust_fixture")
    # Legacy is rustc's default; v0 is chosen with a stable codegen flag.
    flags = ["-C", "symbol-mangling-version=v0"] if mangling == "v0" else []
    run(["rustc", "-g", "-C", "opt-level=1", *flags, "-o", program, source])
    dump = run_fixture(program, directory)
    stacks = heapfold(dump)
    # v0 names an inherent method through its type, as rustc-demangle does.
    hold = {"legacy": "rust_fixture::Buffers::hold_buffers",
            "v0": "<rust_fixture::Buffers>::hold_buffers"}[mangling]

    def leaf_total(function):
        """The bytes of the stacks whose leaf is `function` or a closure of it."""
        return sum(v for s, v in stacks.items() if re.fullmatch(
            re.escape(function) + r"(::\{\{closure\}\}|::\{closure#\d+\})?", s.split(";")[-1]))

    check_near(leaf_total(hold), 300 * 4096, f"{mangling}: hold_buffers in {list(stacks)}")
    check_near(leaf_total("rust_fixture::reserve_buffers"), 40 * 8192 + 1536,
               f"{mangling}: reserve_buffers in {list(stacks)}")
    check_near(leaf_total("rust_fixture::zeroed_pages"), 24 * 16384 + 576,
               f"{mangling}: zeroed_pages in {list(stacks)}")
    check_near(leaf_total("rust_fixture::box_records"), 64 * 2048 + 512,
               f"{mangling}: box_records in {list(stacks)}")
    check(leaf_total("rust_fixture::index_sessions") >= 2000 * 16,
          f"{mangling}: index_sessions in {list(stacks)}")
    check(leaf_total("rust_fixture::make_strings") >= 100 * 1024,
          f"{mangling}: make_strings in {list(stacks)}")
    for stack in stacks:
        frames = stack.split(";")
        check(not re.search(r"::h[0-9a-f]{16}($|;)", stack), f"{mangling}: hash left in {stack}")
        check(not re.search(r"(^|;)_(ZN|R)", stack), f"{mangling}: mangled name in {stack}")
        # The standard library's frames are never a leaf while the program has a frame.
        if any(f.startswith("rust_fixture::") or f.startswith("<rust_fixture::") for f in frames):
            check(not STANDARD.match(frames[-1]), f"{mangling}: a standard frame is the leaf: {stack}")
        # Rust's start-up frames stay at the root, rootward of the program's main.
        if "rust_fixture::main" in frames:
            start = frames.index("std::rt::lang_start_internal") if (
                "std::rt::lang_start_internal" in frames) else None
            check(start is not None and start < frames.index("rust_fixture::main"),
                  f"{mangling}: start-up frames not at the root: {stack}")

    rows = []
    for line in run([tool("heapfold"), "-q", "--text", dump]).stdout.splitlines()[2:]:
        rows.append(line.split(None, 5)[5])
    own = {hold, "rust_fixture::reserve_buffers", "rust_fixture::zeroed_pages",
           "rust_fixture::box_records", "rust_fixture::make_strings",
           "rust_fixture::index_sessions"}
    own |= {f + closure for f in set(own) for closure in ("::{{closure}}", "::{closure#0}")}
    check(set(rows[:4]) <= own, f"{mangling}: heapfold --text's flat leaders: {rows[:8]}")
    check(rows[0] == hold, f"{mangling}: the flat leader is {rows[0]}, not hold_buffers")

    # --keep-allocator-frames: the standard library's frames are back under the program's.
    kept = heapfold("--keep-allocator-frames", dump)
    for function, plumbing in ((hold, "from_elem"), ("rust_fixture::reserve_buffers", "alloc::"),
                               ("rust_fixture::index_sessions", "hashbrown::"),
                               ("rust_fixture::box_records", "alloc")):
        check(any(plumbing in ";".join(s.split(";")[s.split(";").index(function) + 1:])
                  for s in kept if function in s.split(";")),
              f"{mangling}: --keep-allocator-frames: no {plumbing} under {function}")

    out = os.path.join(directory, "rust.pb.gz")
    run([tool("jeprof2pprof"), dump, "-o", out])
    _, samples, _ = pprof_raw(out)
    check(any(hold in s["frames"] for s in samples),
          f"{mangling}: pprof lacks hold_buffers")
    top = go_pprof("-top", "-symbolize=none", out).stdout
    leaders = [line.split(None, 5)[5].removesuffix(" (inline)") for line in top.splitlines()
               if len(line.split(None, 5)) == 6 and line.split(None, 5)[1].endswith("%")]
    check(leaders and leaders[0] == hold and set(leaders[:4]) <= own,
          f"{mangling}: go tool pprof -top's flat leaders:\n{top}")
print("ok")
