# SPDX-License-Identifier: MIT
"""A jeprof symbolized profile names frames when the program's binary is gone."""

import os
import re
import shutil
import subprocess

from heapkit_e2e import check, check_near, fixture, heapfold, leaf_is, run, run_fixture, sum_where, tool, workdir

directory = workdir()
program = os.path.join(directory, "vanishing_app")
shutil.copy(fixture("alloc_c_pie"), program)
dump = run_fixture(program, directory)

# `jeprof --raw` on a local file writes its symbol section, then refuses to copy a local
# profile; the file it writes for a remote one is that section followed by the dump as
# served, which is what we assemble here.
section = run(["jeprof", "--raw", program, dump], check=False).stdout
check(section.startswith("--- symbol\n") and section.endswith("--- heap\n"),
      f"unexpected jeprof --raw output: {section[:200]!r}")
# That file as jeprof leaves it, with nothing after "--- heap", is refused for what it is.
symbols_only = os.path.join(directory, "symbols_only.prof")
with open(symbols_only, "w") as f:
    f.write(section)
heap_line = section.count("\n") + 1
for name in ("heapfold", "jeprof2pprof"):
    out = os.path.join(directory, "never")
    proc = run([tool(name), symbols_only, "-o", out], check=False)
    check(proc.returncode == 1 and
          f"{symbols_only}:{heap_line}: the heap section after \"--- heap\" is empty" in proc.stderr
          and "remote profile" in proc.stderr and not os.path.exists(out),
          f"{name} on jeprof --raw output of a local dump: exit {proc.returncode}, "
          f"{proc.stderr!r}")

symbolized = os.path.join(directory, "symbolized.prof")
with open(dump) as src, open(symbolized, "w") as dst:
    dst.write(section + src.read())
os.remove(program)

proc = run([tool("heapfold"), symbolized])
# jeprof named every frame of the program: its binary is not missed.
check(program not in proc.stderr,
      f"a warning about the missing binary, whose frames jeprof named: {proc.stderr!r}")
# Without jeprof's name for hold_pages, the binary is missed, and said to be.
lines = section.splitlines(keepends=True)
unnamed = [line for line in lines if not re.search(r" hold_pages(<[0-9a-f]+>)?$", line.rstrip())]
check(len(unnamed) == len(lines) - 1, f"hold_pages not in jeprof's symbols: {section!r}")
partly = os.path.join(directory, "partly.prof")
with open(dump) as src, open(partly, "w") as dst:
    dst.write("".join(unnamed) + src.read())
proc = run([tool("heapfold"), partly])
check(f"{program}: cannot" in proc.stderr,
      f"no warning about the missing binary, with a frame unnamed: {proc.stderr!r}")
stacks = heapfold(symbolized)
check_near(sum_where(stacks, leaf_is("hold_pages")), 4096000, "hold_pages named by jeprof")
check(any("main;hold_pages" in s for s in stacks), f"main not named: {list(stacks)}")

# Standard input can be read once: "-" twice is refused before anything is read.
with open(symbolized) as f:
    proc = subprocess.run([tool("heapfold"), "-", "-"], stdin=f, capture_output=True, text=True,
                          timeout=60)
check(proc.returncode == 1 and proc.stderr ==
      'heapfold: error: standard input ("-") is given more than once; it can be read only once\n',
      f"heapfold - -: exit {proc.returncode}, {proc.stderr!r}")

out = os.path.join(directory, "sym.pb.gz")
run([tool("jeprof2pprof"), symbolized, "-o", out])
check(os.path.getsize(out) > 0, "no pprof written")
print("ok")
