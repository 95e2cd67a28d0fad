# SPDX-License-Identifier: MIT
"""What stays unnamed is summed up. Files without debug information (stripped, as
distributions ship them) take one line together: how many, how many addresses they leave
without a name, the share of the bytes in use under those (checked against the dump's own
stacks), and the one thing to do (Debian's debug archive and the -dbgsym packages, or
DEBUGINFOD_URLS). --verbose tells each file: how many of its addresses, its share, what it
lacks, its build id, and lists the addresses as the output prints them; --quiet says
nothing, --strict still exits 2. The file: a copy of the labels fixture's library
stripped of .symtab and DWARF, whose static constructor then has no name (its exported
label still has one, from .dynsym: the file is not said to have no symbol table). One
line per file per command, however many dumps (--growth, --base): their addresses
counted together. A file a Debian package installed names the package's -dbgsym
(libstdc++6's, for the C++ fixture's start-up allocations in libstdc++), which
heapkit-index looks up ahead of the first profile."""

import glob
import os
import re
import shutil

from heapkit_e2e import (JEMALLOC_SO, PROFILE_CONF, check, fixture, run, run_fixture, share_under,
                         tool, workdir)

SUMMARY = re.compile(r"^heapfold: warning: (\d+) files? without debug information \(([^)]*)\) "
                     r"leaves? (\d+) address(?:es)? without a name, under ([\d.]+)% of the bytes in "
                     r"use: (.*) \(--verbose says which file holds what\)$", re.M)


def unnamed_offsets(verbose):
    """{file: file offsets} of the addresses --verbose lists without a name."""
    unnamed = {}
    for path, offset in re.findall(r"^heapfold: warning: (\S+): no name at \S+\+0x([0-9a-f]+)$",
                                   verbose, re.M):
        unnamed.setdefault(path, set()).add(int(offset, 16))
    return unnamed


def without_debug_info(verbose):
    """The files --verbose says have no DWARF."""
    return set(re.findall(r"^heapfold: warning: (\S+): \d+ of \d+ address.*? no name, under "
                          r"[\d.]+% of the bytes in use: (?:stripped|no symbol table|they lie "
                          r"outside every symbol of its \.symtab, and it has no \.debug_info)",
                          verbose, re.M))


def check_summary(dump, err, verbose):
    """The one summary line of `err`, its share checked against the dump's stacks through
    the unnamed addresses --verbose lists of the files without debug information."""
    found = SUMMARY.findall(err)
    check(len(found) == 1, f"not one summary line: {err!r}")
    unnamed = unnamed_offsets(verbose)
    files = without_debug_info(verbose)
    count, names, addresses, percent, todo = found[0]
    named = set(re.sub(r" and \d+ more$", "", names).split(", "))
    check(int(count) == len(files) and named <= {os.path.basename(f) for f in files},
          f"{found[0]} against {files}")
    check(int(addresses) == sum(len(unnamed.get(f, ())) for f in files),
          f"{found[0]}: --verbose lists {unnamed}")
    share = 100 * share_under(dump, {f: unnamed.get(f, set()) for f in files})
    check(abs(float(percent) - share) <= 0.051, f"{found[0]}: the dump says {share:.3f}%")
    return todo


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

# Without --verbose, one summary line, none of the file's own.
check(not [line for line in proc.stderr.splitlines()
           if line.startswith(f"heapfold: warning: {library}:")],
      f"a line of the library's own without --verbose: {proc.stderr!r}")
todo = check_summary(dump, proc.stderr, verbose)
check("pass its debug files' directory (--debug-dir)" in todo or "--debug-dir" in todo,
      f"the summary does not say how to name {library}'s code: {todo!r}")
# With --verbose, the whole story, the file's share among it.
lines = [line for line in verbose.splitlines()
         if line.startswith(f"heapfold: warning: {library}:") and ": no name at " not in line]
check(len(lines) == 1, f"not one summary line for {library} under --verbose: {verbose!r}")
match = re.match(rf"heapfold: warning: {re.escape(library)}: (\d+) of (\d+) address(es)? ha(s|ve) "
                 r"no name, under ([\d.]+)% of the bytes in use: stripped: only its exported "
                 r"symbols \(\.dynsym\) name code, and these "
                 r"lie in functions it does not export; they are shown as liblabels_fixture\.so!"
                 r"0x<start of their function>, one frame per function \(\d+ functions?\); install "
                 r"its debug package, or pass its debug directory \(--debug-dir\)"
                 rf".*; build id {build_id}$", lines[0])
check(match, f"unexpected summary line: {lines[0]!r}")
check(int(match.group(1)) == len(unnamed) and int(match.group(2)) == len(printed),
      f"{lines[0]!r}: {len(unnamed)} of {len(printed)} addresses are unnamed in the output")
check(int(re.search(r"\((\d+) functions?\)", lines[0]).group(1)) == len(functions),
      f"{lines[0]!r}: the output shows {len(functions)} functions")
library_share = 100 * share_under(dump, {library: unnamed_offsets(verbose)[library]})
check(library_share > 0 and abs(float(match.group(5)) - library_share) <= 0.051,
      f"{lines[0]!r}: the dump puts {library_share:.3f}% under its unnamed addresses")
check(not re.search(r"\d+ of \d+ addresses have no name$", proc.stderr, re.M),
      f"the old total is still printed: {proc.stderr!r}")

check(run([tool("heapfold"), "-q", "-v", dump]).stderr == "", "--quiet is not silent")

# Several dumps in one command: one summary line, and under --verbose one line for the
# file, its addresses counted together.
dumps = [dump] + [run_fixture(program, directory) for _ in range(2)]
for flags in (["--base", dumps[0]] + dumps[1:], dumps):
    check(len(SUMMARY.findall(run([tool("heapfold")] + flags).stderr)) == 1,
          f"heapfold {flags[0]}: not one summary line")
    err = run([tool("heapfold"), "--verbose"] + flags).stderr
    said = [line for line in err.splitlines() if line.startswith(f"heapfold: warning: {library}:")
            and ": no name at " not in line]
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
check(len(SUMMARY.findall(run([tool("heapfold"), "--growth"] + series).stderr)) == 1,
      "--growth: not one summary line")
err = run([tool("heapfold"), "--growth", "--verbose"] + series).stderr
said = [line for line in err.splitlines() if line.startswith(f"heapfold: warning: {leaky}:")
        and ": no name at " not in line]
check(len(said) == 1, f"--growth: {len(said)} lines for {leaky}: {err!r}")
check(len(err.splitlines()) == len(set(err.splitlines())), f"a warning repeated: {err!r}")
everywhere = set()
for each in series:
    everywhere |= set(re.findall(r"leaky_stripped\+0x[0-9a-f]+", run(
        [tool("heapfold"), "--frame", "address", "--keep-allocator-frames", each]).stdout))
total = re.search(r": \d+ of (\d+) address", said[0])
check(total and int(total.group(1)) == len(everywhere),
      f"{said[0]!r}: the dumps have {len(everywhere)} addresses in {leaky} together")

# A Debian package's file: its -dbgsym is named (dpkg-query, run here, says whose it is),
# with how apt gets Debian's debug archive when its sources do not list it yet.
def debug_archive_line():
    """The source line the advice must give here, or None when apt has the archive."""
    sources = ["/etc/apt/sources.list"] + glob.glob("/etc/apt/sources.list.d/*")
    if any(os.path.isfile(f) and "debian-debug" in open(f).read() for f in sources):
        return None
    release = dict(line.split("=", 1) for line in open("/etc/os-release").read().splitlines()
                   if "=" in line)
    codename = release.get("VERSION_CODENAME", "").strip('"') or "<release>"
    return f"deb http://deb.debian.org/debian-debug/ {codename}-debug main"


cpp_dump = run_fixture(fixture("alloc_cpp"), directory, preload=False)
cache = os.path.join(directory, "cache")
env = dict(os.environ, HEAPKIT_CACHE_DIR=cache)
err = run([tool("heapfold"), cpp_dump], env=env).stderr
verbose = run([tool("heapfold"), "--verbose", cpp_dump], env=env).stderr
libstdcxx = re.search(r"^heapfold: warning: (\S*libstdc\+\+\S*): \d+ of", verbose, re.M)
if libstdcxx:
    path = libstdcxx.group(1)
    owner = run(["dpkg-query", "-S", os.path.realpath(path)], check=False).stdout
    package = owner.split(":")[0].split(",")[0]
    todo = check_summary(cpp_dump, err, verbose)
    check(package and f"apt install {package}-dbgsym" in todo,
          f"the package of {path} ({package!r}) is not named: {err!r}")
    line = debug_archive_line()
    check(line is None or f"'{line}' in /etc/apt/sources.list.d/" in todo,
          f"the summary does not say how to add the debug archive ({line}): {todo!r}")
    check("no symbol table" not in verbose.split(path)[1].splitlines()[0],
          f"libstdc++ exports symbols, yet: {verbose!r}")
    # dpkg's answer is kept beside the frame cache, and used by the next command.
    kept = os.path.join(cache, "debian-packages")
    check(re.search(rf"^{re.escape(path)}\t\d+\t{re.escape(package)}$", open(kept).read(), re.M),
          f"no package kept for {path}: {open(kept).read()!r}")
    # heapkit-index asks ahead of the first profile: that profile's command asks nothing
    # (the file is not replaced).
    indexed = os.path.join(directory, "indexed-cache")
    run([tool("heapkit-index"), "--cache-dir", indexed] + sorted(without_debug_info(verbose)))
    kept = os.path.join(indexed, "debian-packages")
    check(re.search(rf"^{re.escape(path)}\t\d+\t{re.escape(package)}$", open(kept).read(), re.M),
          f"heapkit-index kept no package for {path}")
    before = os.stat(kept)
    err = run([tool("heapfold"), cpp_dump], env=dict(env, HEAPKIT_CACHE_DIR=indexed)).stderr
    check(f"apt install {package}-dbgsym" in err, f"the kept package is not used: {err!r}")
    after = os.stat(kept)
    check((before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns),
          "the command after heapkit-index looked the package up again")
else:
    print("SKIP the package check: nothing of libstdc++ stayed unnamed here (its debug file "
          "is installed?)")
proc = run([tool("heapfold"), "--strict", dump], check=False)
check(proc.returncode == 2, f"--strict exited {proc.returncode}")
print("ok")
