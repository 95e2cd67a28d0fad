# SPDX-License-Identifier: MIT
"""Inlined functions that DWARF gives no linkage name (members of types in an anonymous
namespace, static functions) are named with their scopes — namespaces, classes and
template arguments — in folded stacks and in pprof: each inlined frame reads as what
llvm-symbolizer and addr2line print, from the symbol table, for the same function's
out-of-line copy (the demangled symbol), without its parameter list and return type."""

import os
import re

from heapkit_e2e import (check, check_near, fixture, heapfold, llvm_frames, pprof_raw, run,
                         run_fixture, tool, workdir)

program = fixture("scopes_cpp")
directory = workdir()
dump = run_fixture(program, directory)


def top_level(text, characters):
    """Indexes of `characters` in `text` outside (), <> and []."""
    depth = 0
    for i, c in enumerate(text):
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            depth -= 1
        elif depth == 0 and c in characters:
            yield i


def without_signature(demangled):
    """'long* a::(anonymous namespace)::f<long>(int)' -> 'a::(anonymous namespace)::f<long>'."""
    check(demangled.endswith(")"), f"not a function's demangled name: {demangled!r}")
    depth = 0
    for i in range(len(demangled) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(demangled[i], 0)
        if depth == 0:
            name = demangled[:i]
            break
    spaces = list(top_level(name, " "))
    return name[spaces[-1] + 1:] if spaces else name


# The out-of-line copies: local functions of namespace store, as nm lists them.
copies = {}
for line in run(["nm", "--defined-only", program]).stdout.splitlines():
    address, kind, mangled = line.split(maxsplit=2)
    if kind == "t" and mangled.startswith("_ZN5store") and "." not in mangled:
        copies[mangled] = int(address, 16)
expected = {}
for mangled, address in copies.items():
    llvm = llvm_frames(program, address)[-1][0]
    addr2line = run(["addr2line", "-f", "-C", "-e", program, hex(address)]).stdout.splitlines()[0]
    check(llvm == addr2line, f"{mangled}: llvm-symbolizer {llvm!r}, addr2line {addr2line!r}")
    expected[without_signature(llvm)] = llvm
check(len(expected) == 5, f"expected five out-of-line copies, found {expected}")

stacks = heapfold("--annotate-inline", dump)
sizes = {"LRUCache::Insert": 8192, "LRUCache::Shard::take": 12288, "Pool<int>::grab": 16384,
         "make_many<long>": 20480, "keep_static": 24576}
for name in expected:
    size = next(v for k, v in sizes.items() if name.endswith("::" + k))
    inlined = sum(v for s, v in stacks.items() if f"store::fill();{name}_[i]" in s)
    check_near(inlined, size, f"inlined {name} (as {expected[name]} out of line) in {list(stacks)}")
    outline = sum(v for s, v in stacks.items() if s.split(";")[-1] == expected[name] or
                  f";{expected[name]};" in s)
    check(outline > 0, f"out-of-line {expected[name]} missing: {list(stacks)}")

# What no out-of-line copy shows: the constructor, and Pool<long>::grab inlined into
# make_many<long>.
anonymous = "store::(anonymous namespace)::"
check_near(sum(v for s, v in stacks.items() if s.endswith(f"store::fill();{anonymous}LRUCache::LRUCache_[i]")),
           128, f"the inlined constructor in {list(stacks)}")
check_near(sum(v for s, v in stacks.items()
               if s.endswith(f"{anonymous}make_many<long>_[i];{anonymous}Pool<long>::grab_[i]")),
           20480, f"make_many<long> -> Pool<long>::grab in {list(stacks)}")
bare = {"Insert", "take", "grab", "keep_static", "LRUCache", "make_many<long>"}
for stack in stacks:
    names = {frame.removesuffix("_[i]") for frame in stack.split(";")}
    check(not names & bare, f"a bare name in {stack}")

# pprof names the same inline frames.
out = os.path.join(directory, "scopes.pb.gz")
run([tool("jeprof2pprof"), dump, "-o", out])
_, samples, _ = pprof_raw(out)
pprof_names = {name for sample in samples for name in sample["frames"]}
for name in list(expected) + [f"{anonymous}LRUCache::LRUCache", f"{anonymous}Pool<long>::grab"]:
    check(name in pprof_names, f"pprof lacks {name}: {sorted(pprof_names)}")
check(not pprof_names & bare, f"bare names in pprof: {pprof_names & bare}")
print("ok")
