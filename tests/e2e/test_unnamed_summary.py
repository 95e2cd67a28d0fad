# SPDX-License-Identifier: MIT
"""What stays unnamed is summed up per file: how many of its addresses, what the file
lacks, its build id and the next step; --verbose lists the addresses as the output
prints them; --quiet says nothing, --strict still exits 2. The file: a copy of the labels
fixture's library stripped of .symtab and DWARF, whose static constructor then has no
name (its exported label still has one, from .dynsym)."""

import os
import re
import shutil

from heapkit_e2e import check, fixture, run, run_fixture, tool, workdir

directory = workdir()
program = os.path.join(directory, "labels_main")
library = os.path.join(directory, "liblabels_fixture.so")  # found through RUNPATH $ORIGIN
shutil.copy(fixture("labels_main"), program)
shutil.copy(fixture("liblabels_fixture.stripped.so"), library)
# meson's LD_LIBRARY_PATH would load the unstripped library from the build directory.
os.environ.pop("LD_LIBRARY_PATH", None)
dump = run_fixture(program, directory)
with open(dump) as f:
    check(f" {library}\n" in f.read(), f"the dump does not map {library}")
build_id = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", library]).stdout).group(1)

proc = run([tool("heapfold"), "--frame", "address", dump])
printed = set(re.findall(r"liblabels_fixture\.so\+0x[0-9a-f]+", proc.stdout))
proc = run([tool("heapfold"), dump])
unnamed = set(re.findall(r"liblabels_fixture\.so\+0x[0-9a-f]+", proc.stdout))
check(unnamed, f"the stripped library left nothing unnamed: {proc.stdout!r}")

lines = [line for line in proc.stderr.splitlines() if line.startswith(f"heapfold: warning: {library}:")]
check(len(lines) == 1, f"not one summary line for {library}: {proc.stderr!r}")
match = re.match(rf"heapfold: warning: {re.escape(library)}: (\d+) of (\d+) address(es)? ha(s|ve) "
                 r"no name: no symbol table: install its debug package, or pass its debug "
                 rf"directory; build id {build_id}$", lines[0])
check(match, f"unexpected summary line: {lines[0]!r}")
check(int(match.group(1)) == len(unnamed) and int(match.group(2)) == len(printed),
      f"{lines[0]!r}: {len(unnamed)} of {len(printed)} addresses are unnamed in the output")
check(not re.search(r"\d+ of \d+ addresses have no name$", proc.stderr, re.M),
      f"the old total is still printed: {proc.stderr!r}")

# --verbose: the unnamed addresses, as the output prints them.
verbose = run([tool("heapfold"), "--verbose", dump]).stderr
listed = set(re.findall(rf"^heapfold: warning: {re.escape(library)}: no name at "
                        r"(liblabels_fixture\.so\+0x[0-9a-f]+)$", verbose, re.M))
check(listed == unnamed, f"--verbose listed {listed}, the output has {unnamed} unnamed")
check(lines[0] in verbose.splitlines(), "--verbose lost the summary line")

check(run([tool("heapfold"), "-q", "-v", dump]).stderr == "", "--quiet is not silent")
proc = run([tool("heapfold"), "--strict", dump], check=False)
check(proc.returncode == 2, f"--strict exited {proc.returncode}")
print("ok")
