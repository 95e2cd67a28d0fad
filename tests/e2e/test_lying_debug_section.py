# SPDX-License-Identifier: MIT
"""A compressed debug section's claimed size is not trusted (issue 35, medium 6): a debug
file of a few kilobytes whose .debug_info header claims 2 GiB, or 1 TiB, inflated, is
not used (deflate packs at most 1032 bytes into one), the run ends as it would without
it (names from the symbol table), under a 1 GiB address-space limit, never "out of
memory": a warning names the file."""

import os
import re
import shutil
import struct

from heapkit_e2e import check, fixture, run, run_fixture, skip_if_sanitized, tool, workdir

skip_if_sanitized(tool("heapfold"), "the lying sections are read under an address-space limit (prlimit)")

SHF_COMPRESSED = 0x800
directory = workdir()
program = os.path.join(directory, "lying_app")
shutil.copy(fixture("alloc_c_pie"), program)
debug = os.path.join(directory, "stash", "lying_app.debug")  # not beside the program
os.mkdir(os.path.dirname(debug))
run(["objcopy", "--only-keep-debug", "--compress-debug-sections=zlib", program, debug])
run(["strip", "--strip-debug", program])
identity = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", program]).stdout).group(1)
dump = run_fixture(program, directory)


def claim(path, size):
    """Sets the ch_size of `path`'s compressed .debug_info (ELF64, little-endian)."""
    with open(path, "r+b") as f:
        elf = bytearray(f.read())
        shoff, = struct.unpack_from("<Q", elf, 0x28)
        entsize, count, names = struct.unpack_from("<HHH", elf, 0x3A)
        sections = [struct.unpack_from("<IIQQQQ", elf, shoff + i * entsize) for i in range(count)]
        strings = sections[names][4]
        for name, _, flags, _, offset, _ in sections:
            if elf[strings + name:].split(b"\0", 1)[0] == b".debug_info":
                check(flags & SHF_COMPRESSED, ".debug_info is not compressed")
                struct.pack_into("<Q", elf, offset + 8, size)
                f.seek(0)
                f.write(elf)
                return
    check(False, f"{path} has no .debug_info")


def heapfold(tree):
    return run(["prlimit", f"--as={1 << 30}", tool("heapfold"), "--no-cache", "--frame",
                "function+line", "--debug-dir", tree, dump], check=False)


honest_tree = os.path.join(directory, "honest")
os.makedirs(os.path.join(honest_tree, ".build-id", identity[:2]))
shutil.copy(debug, os.path.join(honest_tree, ".build-id", identity[:2], identity[2:] + ".debug"))
honest = heapfold(honest_tree)
check(honest.returncode == 0 and "alloc_c.c:" in honest.stdout,
      f"the honest debug file gave no lines: {honest.stderr}")
without = run([tool("heapfold"), "--no-cache", "--frame", "function+line", dump]).stdout
check(os.path.getsize(debug) < 64 << 10, f"the debug file has {os.path.getsize(debug)} bytes")
for size, said in ((2 << 30, "2 GiB"), (1 << 40, "1 TiB")):
    tree = os.path.join(directory, said.replace(" ", ""))
    lying = os.path.join(tree, ".build-id", identity[:2], identity[2:] + ".debug")
    os.makedirs(os.path.dirname(lying))
    shutil.copy(debug, lying)
    claim(lying, size)
    proc = heapfold(tree)
    check(proc.returncode == 0, f"claiming {said}: exit {proc.returncode}, {proc.stderr!r}")
    check("out of memory" not in proc.stderr, f"claiming {said}: {proc.stderr!r}")
    check(f"{lying}: skipped: a compressed section claims {size} bytes" in proc.stderr,
          f"claiming {said}: no warning naming the file: {proc.stderr!r}")
    check(proc.stdout == without, f"claiming {said}: output differs from no debug file:\n{proc.stdout}\n{without}\n{proc.stderr}")
print("ok")
