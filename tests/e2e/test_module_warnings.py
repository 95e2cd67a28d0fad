# SPDX-License-Identifier: MIT
"""Warnings about modules' files come only for modules some stack runs through, once per
file: a missing library that holds no frame, or a file merged dumps map twice, is not
noise on stderr. Each says the share of the bytes in use under its unnamed addresses,
checked against the dump's stacks."""

import os
import re
import shutil

from heapkit_e2e import check, dump_stacks, fixture, run, run_fixture, tool, workdir

directory = workdir()
program = os.path.join(directory, "srv", "app")
os.makedirs(os.path.dirname(program))
shutil.copy(fixture("alloc_c_pie"), program)
dump = run_fixture(program, directory)
second = run_fixture(program, directory)


def warned_paths(err):
    """The files (as the dump names them) whose summary line says they cannot be opened."""
    return re.findall(r"^heapfold: warning: (\S+): \d+ of \d+ address.*: cannot open", err, re.M)


def warned_shares(err):
    """{file: the share of the bytes in use its line says stacks through it hold}."""
    return {path: float(percent) for path, percent in re.findall(
        r"^heapfold: warning: (\S+): \d+ of \d+ address\S* ha\S+ no name, under ([\d.]+)% of "
        r"the bytes in use: .*cannot open", err, re.M)}


def share_through(path, file):
    """The share of the dump's bytes in use under stacks through `file`, from its stacks."""
    stacks, mappings = dump_stacks(path)
    ranges = [(start, end) for start, end, _, name in mappings if name == file]
    total = sum(value for _, value in stacks)
    through = sum(value for addresses, value in stacks
                  if any(start <= a < end for a in addresses for start, end in ranges))
    return 100 * through / total


def mapped_files(path):
    with open(path) as f:
        return set(re.findall(r" r-xp .* (/\S+)$", f.read(), re.M))


# Under a root that holds only the program, no library can be opened: the warnings name
# those some stack runs through, and not the others (libm, libgcc_s: no frame of theirs).
root = os.path.join(directory, "root")
os.makedirs(os.path.dirname(root + program))
shutil.copy(program, root + program)
err = run([tool("heapfold"), "--sysroot", root, dump]).stderr
addresses = run([tool("heapfold"), "--no-symbolize", "--keep-allocator-frames", "--frame",
                 "address", dump]).stdout
in_stacks = {path for path in mapped_files(dump) if os.path.basename(path) + "+0x" in addresses}
warned = warned_paths(err)
check(warned, f"no warning about the libraries under the root: {err!r}")
check(len(warned) == len(set(warned)), f"a file warned about twice: {err!r}")
check(set(warned) == in_stacks - {program},
      f"warned about {warned}, stacks run through {in_stacks}:\n{err}")
check(len(mapped_files(dump) - in_stacks) > 0, "every mapped file holds a frame: nothing shown")
# Each line says how much of the profile lies under the file (all of its addresses are
# unnamed: every stack through it), as the dump's stacks have it.
for path, percent in warned_shares(err).items():
    check(abs(percent - share_through(dump, path)) <= 0.051,
          f"{path}: said {percent}%, the dump has {share_through(dump, path):.3f}%")
check(set(warned_shares(err)) == set(warned), f"a line without its share: {err!r}")

# Two dumps of one program (two address-space layouts), merged, with a build given that
# does not fit either mapping: one warning.
layouts = {re.search(r"^(\S+) r-xp .* " + re.escape(program) + "$", open(path).read(), re.M).group(1)
           for path in (dump, second)}
if len(layouts) == 2:
    err = run([tool("heapfold"), "--binary", fixture("twin_extra"), dump, second]).stderr
    check(err.count("does not fit") == 1, f"the refused build is not warned about once: {err!r}")
else:
    print("ASLR is off: both dumps map the program alike; the merged case is not checked")
print("ok")
