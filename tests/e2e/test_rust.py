# SPDX-License-Identifier: MIT
"""Rust programs (std only, system malloc = preloaded jemalloc), legacy and v0 mangling:
names demangled without hashes, allocation shims cut. Skipped (77) without rustc."""

import os
import re
import shutil
import sys

from heapkit_e2e import (SOURCE_DIR, check, check_near, pprof_raw, run, run_fixture, tool,
                         heapfold, workdir)

if shutil.which("rustc") is None:
    print("SKIP: rustc is not installed (Debian package rustc; tests/install-packages.sh leaves it "
          "out)")
    sys.exit(77)

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
    held = sum(v for s, v in stacks.items() if hold in s.split(";"))
    check_near(held, 300 * 4096, f"{mangling}: hold_buffers in {list(stacks)}")
    check(any("rust_fixture::make_strings" in s.split(";") for s in stacks),
          f"{mangling}: make_strings missing")
    for stack in stacks:
        check(not re.search(r"::h[0-9a-f]{16}($|;)", stack), f"{mangling}: hash left in {stack}")
        check(not re.search(r"(^|;)_(ZN|R)", stack), f"{mangling}: mangled name in {stack}")
        check(not re.search(r"(^|;)(__rust_alloc|__rdl_alloc|alloc::alloc::)", stack),
              f"{mangling}: allocation shim left in {stack}")

    out = os.path.join(directory, "rust.pb.gz")
    run([tool("jeprof2pprof"), dump, "-o", out])
    _, samples, _ = pprof_raw(out)
    check(any(hold in s["frames"] for s in samples),
          f"{mangling}: pprof lacks hold_buffers")
print("ok")
