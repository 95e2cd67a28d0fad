# SPDX-License-Identifier: MIT
"""A C fixture, PIE and non-PIE, run under LD_PRELOADed jemalloc: both tools must name
its functions and report what it allocated."""

import gzip
import os
import re

from heapkit_e2e import (check, check_near, fixture, go_pprof, heapfold, leaf_is, pprof_raw,
                         pprof_total, run, run_fixture, sum_where, tool, workdir)

ALLOCATOR = re.compile(r"^(malloc|calloc|je_.*|libjemalloc\.so\.2\+0x[0-9a-f]+)$")


def check_folded(dump, program):
    inuse = heapfold(dump)
    check_near(sum_where(inuse, leaf_is("hold_pages")), 4096000, "inuse_space of hold_pages")
    check_near(sum_where(inuse, leaf_is("keep_zeroed")), 51200, "inuse_space of keep_zeroed")
    check(sum_where(inuse, leaf_is("churn_small")) == 0, "churn_small frees everything")
    check(any(s.endswith("main;hold_pages") for s in inuse), f"no main;hold_pages in {inuse}")
    for stack in inuse:
        frames = stack.split(";")
        check(not any(ALLOCATOR.match(f) for f in frames), f"allocator frame left in {stack}")
        check(not any(re.match(r"^0x[0-9a-f]+$", f) for f in frames),
              f"bare address for a known module in {stack}")

    alloc = heapfold("--sample", "alloc_space", dump)
    check_near(sum_where(alloc, leaf_is("churn_small")), 256000, "alloc_space of churn_small")
    objects = heapfold("--sample=alloc_objects", dump)
    check_near(sum_where(objects, leaf_is("churn_small")), 2000, "alloc_objects of churn_small")
    inuse_objects = heapfold("--sample", "inuse_objects", dump)
    check_near(sum_where(inuse_objects, leaf_is("hold_pages")), 1000, "inuse_objects")

    kept = heapfold("--keep-allocator-frames", dump)
    held = [s for s in kept if "hold_pages;" in s]
    check(held and all(re.search(r"hold_pages;(malloc|libjemalloc)", s) for s in held),
          f"--keep-allocator-frames kept no allocator frame: {held}")

    bare = heapfold("--no-symbolize", dump)
    name = os.path.basename(program)
    check(not any("hold_pages" in s for s in bare), "--no-symbolize still named frames")
    check(any(re.search(rf"(^|;){name}\+0x[0-9a-f]+$", s) for s in bare),
          f"--no-symbolize frames are not {name}+0xOFFSET: {list(bare)[:3]}")


def build_id_of(path):
    notes = run(["readelf", "-n", path]).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)


def check_pprof(dump, program, directory):
    out = os.path.join(directory, "heap.pb.gz")
    run([tool("jeprof2pprof"), dump, "-o", out])
    with open(out, "rb") as f:
        check(f.read(2) == b"\x1f\x8b", "jeprof2pprof output is not gzipped")
    types, samples, mappings = pprof_raw(out)
    check(types == ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"],
          f"sample types {types}")
    held = pprof_total(samples, "inuse_space", lambda f: f[0] == "hold_pages")
    check_near(held, 4096000, "pprof inuse_space with hold_pages at the leaf")
    check_near(pprof_total(samples, "alloc_space", lambda f: f[0] == "churn_small"), 256000,
               "pprof alloc_space of churn_small")
    check(mappings[0].split()[2] == program, f"first mapping is not the program: {mappings[0]}")
    check(build_id_of(program) in mappings[0], f"build id missing from {mappings[0]}")
    top = go_pprof("-top", "-symbolize=none", out).stdout
    check("hold_pages" in top and "main" in top, f"go tool pprof -top lacks names:\n{top}")

    bare = os.path.join(directory, "bare.pb.gz")
    run([tool("jeprof2pprof"), "--no-symbolize", dump, "-o", bare])
    _, bare_samples, bare_mappings = pprof_raw(bare)
    check(not any("hold_pages" in s["frames"] for s in bare_samples), "unsymbolized has names")
    check("[FN]" not in bare_mappings[0] and build_id_of(program) in bare_mappings[0],
          f"unsymbolized mapping wrong: {bare_mappings[0]}")

    # Every gzip level writes the same profile; 0 stores it, 9 packs it best.
    sizes = {}
    for level in ("0", "1", "9"):
        path = os.path.join(directory, f"level{level}.pb.gz")
        run([tool("jeprof2pprof"), "--compress-level", level, dump, "-o", path])
        sizes[level] = os.path.getsize(path)
        check(pprof_raw(path)[1] == samples, f"--compress-level {level} changed the samples")
    check(sizes["0"] > sizes["1"] >= sizes["9"], f"sizes by level: {sizes}")
    proc = run([tool("jeprof2pprof"), "--compress-level", "10", dump, "-o", path], check=False)
    check(proc.returncode == 1 and "--compress-level" in proc.stderr, f"level 10: {proc.stderr}")


def check_inputs(dump, directory):
    """gzip input and standard input give the same result as the plain file."""
    plain = run([tool("heapfold"), dump]).stdout
    packed = os.path.join(directory, "dump.heap.gz")
    with open(dump, "rb") as src, gzip.open(packed, "wb") as dst:
        dst.write(src.read())
    check(run([tool("heapfold"), packed]).stdout == plain, "gzipped input differs")
    with open(packed, "rb") as f:
        piped = run([tool("heapfold"), "-"], stdin=f.read(), binary=True).stdout
    check(piped.decode() == plain, "stdin input differs")


for variant in ("alloc_c_pie", "alloc_c_nopie"):
    directory = workdir()
    program = fixture(variant)
    dump = run_fixture(program, directory)
    check_folded(dump, program)
    check_pprof(dump, program, directory)
    check_inputs(dump, directory)
print("ok")
