# SPDX-License-Identifier: MIT
"""What stays unnamed is summed up per file: how many of its addresses, what the file
lacks, its build id and the next step; --verbose lists the addresses as the output
prints them; --quiet says nothing, --strict still exits 2. The file: a copy of the labels
fixture's library stripped of .symtab and DWARF, whose static constructor then has no
name (its exported label still has one, from .dynsym: the file is not said to have no
symbol table). One line per file per command, however many dumps (--growth, --base):
their addresses counted together. A file a Debian package installed names the package's
-dbgsym (libstdc++6's, for the C++ fixture's start-up allocations in libstdc++)."""

import glob
import os
import re
import shutil

from heapkit_e2e import JEMALLOC_SO, PROFILE_CONF, check, fixture, run, run_fixture, tool, workdir

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
# What has no name is shown by its function's start: fewer frames than addresses.
proc = run([tool("heapfold"), dump])
functions = set(re.findall(r"liblabels_fixture\.so!0x[0-9a-f]+", proc.stdout))
check(functions, f"the stripped library left nothing unnamed: {proc.stdout!r}")
verbose = run([tool("heapfold"), "--verbose", dump]).stderr
unnamed = set(re.findall(rf"^heapfold: warning: {re.escape(library)}: no name at "
                         r"(liblabels_fixture\.so\+0x[0-9a-f]+)$", verbose, re.M))
check(unnamed <= printed and len(unnamed) >= len(functions),
      f"--verbose listed {unnamed}; the output shows {printed} and functions {functions}")

# Without --verbose, one short line: what the file lacks and how to get names.
short = [line for line in proc.stderr.splitlines() if line.startswith(f"heapfold: warning: {library}:")]
check(len(short) == 1, f"not one summary line for {library}: {proc.stderr!r}")
check(re.match(rf"heapfold: warning: {re.escape(library)}: \d+ of \d+ address(es)? ha(s|ve) no "
               r"name: no symbols beyond \.dynsym \(stripped\); install its debug file "
               r"\(--debug-dir\), .*DEBUGINFOD_URLS.* \(--verbose says more\)$", short[0]),
      f"unexpected short line: {short[0]!r}")
# With it, the whole story.
lines = [line for line in verbose.splitlines()
         if line.startswith(f"heapfold: warning: {library}:") and ": no name at " not in line]
check(len(lines) == 1, f"not one summary line for {library} under --verbose: {verbose!r}")
match = re.match(rf"heapfold: warning: {re.escape(library)}: (\d+) of (\d+) address(es)? ha(s|ve) "
                 r"no name: stripped: only its exported symbols \(\.dynsym\) name code, and these "
                 r"lie in functions it does not export; they are shown as liblabels_fixture\.so!"
                 r"0x<start of their function>, one frame per function \(\d+ functions?\); install "
                 r"its debug package, or pass its debug directory \(--debug-dir\)"
                 rf".*; build id {build_id}$", lines[0])
check(match, f"unexpected summary line: {lines[0]!r}")
check(int(match.group(1)) == len(unnamed) and int(match.group(2)) == len(printed),
      f"{lines[0]!r}: {len(unnamed)} of {len(printed)} addresses are unnamed in the output")
check(int(re.search(r"\((\d+) functions?\)", lines[0]).group(1)) == len(functions),
      f"{lines[0]!r}: the output shows {len(functions)} functions")
check(not re.search(r"\d+ of \d+ addresses have no name$", proc.stderr, re.M),
      f"the old total is still printed: {proc.stderr!r}")

check(run([tool("heapfold"), "-q", "-v", dump]).stderr == "", "--quiet is not silent")

# Several dumps in one command: one line for the file, its addresses counted together.
dumps = [dump] + [run_fixture(program, directory) for _ in range(2)]
for flags in (["--base", dumps[0]] + dumps[1:], dumps):
    err = run([tool("heapfold")] + flags).stderr
    said = [line for line in err.splitlines() if line.startswith(f"heapfold: warning: {library}:")]
    check(len(said) == 1, f"heapfold {flags[0]}: {len(said)} lines for {library}: {err!r}")
    check(len(err.splitlines()) == len(set(err.splitlines())), f"a warning repeated: {err!r}")
    everywhere = set()
    for each in dumps:
        everywhere |= set(re.findall(r"liblabels_fixture\.so\+0x[0-9a-f]+", run(
            [tool("heapfold"), "--frame", "address", each]).stdout))
    total = re.search(r": \d+ of (\d+) address", said[0])
    check(total and int(total.group(1)) == len(everywhere),
          f"{said[0]!r}: the dumps have {len(everywhere)} addresses in the library together")

# --growth over a run's prof_interval dumps (of a stripped copy of the leaky fixture):
# each dump's addresses told once, together.
leaky = os.path.join(directory, "leaky_stripped")
shutil.copy(fixture("leaky"), leaky)
run(["strip", "--strip-all", leaky])
series_dir = os.path.join(directory, "series")
os.makedirs(series_dir)
run([leaky, "12", "0"], env=dict(os.environ, LD_PRELOAD=JEMALLOC_SO, MALLOC_CONF=(
    f"{PROFILE_CONF},lg_prof_interval:20,prof_prefix:{series_dir}/jeprof")))
series = glob.glob(f"{series_dir}/jeprof.*.heap")
check(len(series) >= 5, f"leaky left {len(series)} dumps")
err = run([tool("heapfold"), "--growth"] + series).stderr
said = [line for line in err.splitlines() if line.startswith(f"heapfold: warning: {leaky}:")]
check(len(said) == 1, f"--growth: {len(said)} lines for {leaky}: {err!r}")
check(len(err.splitlines()) == len(set(err.splitlines())), f"a warning repeated: {err!r}")
everywhere = set()
for each in series:
    everywhere |= set(re.findall(r"leaky_stripped\+0x[0-9a-f]+", run(
        [tool("heapfold"), "--frame", "address", "--keep-allocator-frames", each]).stdout))
total = re.search(r": \d+ of (\d+) address", said[0])
check(total and int(total.group(1)) == len(everywhere),
      f"{said[0]!r}: the dumps have {len(everywhere)} addresses in {leaky} together")

# A Debian package's file: its -dbgsym is named (dpkg-query, run here, says whose it is).
cpp_dump = run_fixture(fixture("alloc_cpp"), directory, preload=False)
err = run([tool("heapfold"), cpp_dump]).stderr
libstdcxx = re.search(r"^heapfold: warning: (\S*libstdc\+\+\S*): \d+ of", err, re.M)
if libstdcxx:
    owner = run(["dpkg-query", "-S", os.path.realpath(libstdcxx.group(1))], check=False).stdout
    package = owner.split(":")[0].split(",")[0]
    check(package and f"apt install {package}-dbgsym" in err,
          f"the package of {libstdcxx.group(1)} ({package!r}) is not named: {err!r}")
    check("no symbol table" not in err.split(libstdcxx.group(1))[1].splitlines()[0],
          f"libstdc++ exports symbols, yet: {err!r}")
    # dpkg's answer is kept beside the frame cache: a second command needs no dpkg-query.
    cache = os.path.join(directory, "cache")
    env = dict(os.environ, HEAPKIT_CACHE_DIR=cache)
    run([tool("heapfold"), cpp_dump], env=env)
    check(package in open(os.path.join(cache, "debian-packages")).read(), "no package kept")
    env["PATH"] = os.path.join(directory, "no-programs")  # no dpkg-query to be found
    err = run([tool("heapfold"), cpp_dump], env=env).stderr
    check(f"apt install {package}-dbgsym" in err, f"the kept package is not used: {err!r}")
else:
    print("SKIP the package check: nothing of libstdc++ stayed unnamed here (its debug file "
          "is installed?)")
proc = run([tool("heapfold"), "--strict", dump], check=False)
check(proc.returncode == 2, f"--strict exited {proc.returncode}")
print("ok")
