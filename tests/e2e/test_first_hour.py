# SPDX-License-Identifier: MIT
"""A newcomer's first hour, as the README leads it: the MALLOC_CONF it gives makes dumps
that `go tool pprof -top -sample_index=alloc_space` (the command just below it) reads; a
--growth pattern that matched nothing is "cannot open", not "1 given"; --nodecount takes a
whole number from 1 up; the README says how to read the pages of a build."""

import os
import re

from heapkit_e2e import JEMALLOC_SO, SOURCE_DIR, check, fixture, go_pprof, run, tool, workdir

readme = open(os.path.join(SOURCE_DIR, "..", "README.md")).read()
directory = workdir()

# The C/C++ section's MALLOC_CONF, as printed, on the C fixture; then the conversion
# section's commands.
conf = re.search(r"^MALLOC_CONF=(\S+) \\\n  LD_PRELOAD=\S+ \./myserver\n# at exit", readme,
                 re.M).group(1)
env = dict(os.environ, LD_PRELOAD=JEMALLOC_SO, MALLOC_CONF=f"{conf},prof_prefix:{directory}/jeprof")
run([fixture("alloc_c_pie")], env=env)
dump = next(os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".f.heap"))
check("-sample_index=alloc_space" in readme, "the README no longer shows alloc_space")
pprof = os.path.join(directory, "heap.pb.gz")
run([tool("jeprof2pprof"), dump, "-o", pprof])
top = go_pprof("-top", "-sample_index=alloc_space", pprof)
check("alloc_space" in top.stdout or "hold_pages" in top.stdout,
      f"go tool pprof -sample_index=alloc_space on the README's dump: {top.stdout[:300]!r}")

# A pattern the shell left as it was: the file is missing, with a word on why.
proc = run([tool("heapfold"), "--growth", os.path.join(directory, "none", "jeprof.*.heap")],
           check=False)
check(proc.returncode == 1 and re.search(r"jeprof\.\*\.heap: cannot open: No such file or "
                                         r"directory \(a pattern that matched no file",
                                         proc.stderr), f"unexpanded pattern: {proc.stderr!r}")

# --nodecount: a whole number from 1 up; what once meant "all" silently is refused.
for bad in ("-1", "0", "1e9", "x"):
    proc = run([tool("heapfold"), "--text", "--nodecount", bad, dump], check=False)
    check(proc.returncode == 1 and "takes a whole number from 1 up" in proc.stderr,
          f"--nodecount {bad}: exit {proc.returncode}, {proc.stderr!r}")
table = run([tool("heapfold"), "--text", "--nodecount", "2", dump]).stdout
check(re.search(r"2 of \d+ functions shown", table), f"--nodecount 2: {table!r}")

# Pages of a build, as the README says to read them.
check("man -l build/man/heapfold.1" in readme, "the README does not say how to read a build's pages")
check(os.path.exists(os.path.join(os.environ["HEAPKIT_BUILD_ROOT"], "man", "heapfold.1")),
      "build/man/heapfold.1 is not built")
# The suite's console says what was skipped.
check("SKIP" in open(os.path.join(SOURCE_DIR, "run.sh")).read(), "run.sh does not print skips")
# The demo builds only what it runs (ninja's targets: the two tools and the program it
# profiles), and installs only the build's packages and go, not the test suite's programs.
demo = open(os.path.join(SOURCE_DIR, "..", "examples", "demo.sh")).read()
build_line = re.search(r"^ninja -C build (.+)$", demo, re.M)
check(build_line, "demo.sh builds no named targets")
targets = build_line.group(1).split()
build_root = os.environ["HEAPKIT_BUILD_ROOT"]
for program in set(re.findall(r"\./build/(\S+)", demo)):
    check(program in targets, f"demo.sh runs {program}, which it does not build")
def commands(*names):
    return run(["ninja", "-C", build_root, "-t", "commands", *names]).stdout.count("\n")
mine, everything = commands(*targets), commands("all")
print(f"demo.sh builds with {mine} of the build's {everything} commands")
check(mine < everything / 2, f"demo.sh runs {mine} of {everything} build commands")
# The README's first section says those counts as they are (within a tenth: a source file
# more or less does not make it wrong), and what each command installs.
said = re.search(r"\((\d+) of the build's\s+(\d+) commands\)", readme)
check(said and abs(int(said.group(1)) - mine) <= mine / 10
      and abs(int(said.group(2)) - everything) <= everything / 10,
      f"the README says the demo builds {said and said.groups()} commands; ninja: {mine} of {everything}")
said_all = re.search(r"all (\d+) commands", readme)
check(said_all and abs(int(said_all.group(1)) - everything) <= everything / 10,
      f"the README says the build has {said_all and said_all.group(1)} commands; ninja: {everything}")
run_sh = open(os.path.join(SOURCE_DIR, "run.sh")).read()
check(re.search(r'HEAPKIT_NO_INSTALL.*\n\s*\./tests/install-packages\.sh\n', run_sh)
      and "HEAPKIT_NO_INSTALL=1" in readme and "This one installs nothing" not in readme,
      "tests/run.sh does not install the suite's packages, or the README does not say so")
check("install-packages.sh --demo" in demo, "demo.sh installs the whole suite's packages")
listed = {}
for mode in ("", "--demo"):
    script = ("source <(sed -n '/^build_packages=(/,/^if \\[/p' tests/install-packages.sh "
              "| sed '$d'); [ \"$1\" = --demo ] && packages=(\"${build_packages[@]}\"); "
              "echo \"${packages[@]}\"")
    listed[mode] = set(run(["bash", "-c", script, "_", mode],
                           cwd=os.path.join(SOURCE_DIR, "..")).stdout.split())
check(listed["--demo"] < listed[""] and "golang-go" in listed["--demo"] and
      not listed["--demo"] & {"chromium", "redis-server", "varnish", "clang", "bind9"},
      f"install-packages.sh --demo installs {sorted(listed['--demo'])}")
print("ok")
