# SPDX-License-Identifier: MIT
"""Another build of the program given for the one that ran (--binary, --path-map,
--sysroot): one whose executable segment does not map as the dump's mapping is refused
with a warning, whatever its executable segment's offset; one that fits as well as the
file at the dump's own path, with another build id, is used with a warning naming both. The dump carries no build id:
a file modified after the dump (rebuilt in place, or another build given with --binary)
is used with a warning naming it and --binary/--path-map, and not used under --strict
(exit 2); a file shorter than the pages the dump maps of it is not used.
The builds are one source compiled three ways (-O1, -O2, -O1 plus a function)."""

import os
import re
import shutil

from heapkit_e2e import check, fixture, go_pprof, run, run_fixture, tool, workdir


def build_id(path):
    return re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", path]).stdout).group(1)


def code_segment(path):
    """(offset, vaddr, file size) of the executable PT_LOAD, from readelf."""
    headers = run(["readelf", "-lW", path]).stdout
    match = re.search(r"LOAD\s+0x([0-9a-f]+) 0x([0-9a-f]+) 0x[0-9a-f]+ 0x([0-9a-f]+) "
                      r"0x[0-9a-f]+ R E", headers)
    return tuple(int(g, 16) for g in match.groups())


def pages(segment):
    offset, vaddr, size = segment
    return offset // 4096, (vaddr + size + 4095) // 4096 - vaddr // 4096


same_layout, other_layout = fixture("twin_o2"), fixture("twin_extra")
ran = fixture("twin_o1")
# The premises: the -O2 build maps as the -O1 one does; the one with a function more
# does not (one more page of code), although its code starts at the same offset.
check(pages(code_segment(same_layout)) == pages(code_segment(ran)),
      f"the -O2 twin's code maps differently: {code_segment(same_layout)} {code_segment(ran)}")
check(pages(code_segment(other_layout)) != pages(code_segment(ran)) and
      code_segment(other_layout)[0] == code_segment(ran)[0],
      f"the longer twin: {code_segment(other_layout)} against {code_segment(ran)}")
check(len({build_id(ran), build_id(same_layout), build_id(other_layout)}) == 3,
      "the twins share a build id")

directory = workdir()
program = os.path.join(directory, "srv", "twin")
os.makedirs(os.path.dirname(program))
shutil.copy(ran, program)
dump = run_fixture(program, directory)


def fold(*flags):
    proc = run([tool("heapfold"), *flags, dump])
    return proc.stdout, proc.stderr


def named(out):
    return "main;twin_work " in out


def about_builds(err):
    """The warnings about which build is used (not those about libraries' names)."""
    return [line for line in err.splitlines() if "another build" in line]


out, err = fold()
check(named(out) and not about_builds(err), f"the build that ran: {out!r} {err!r}")

# A copy of the very build elsewhere: no warning.
copy = os.path.join(directory, "copy", "twin")
os.makedirs(os.path.dirname(copy))
shutil.copy(ran, copy)
out, err = fold("--binary", copy)
check(named(out) and not about_builds(err), f"--binary with the same build: {out!r} {err!r}")

# A layout that does not fit: refused, and its build id is not recorded.
out, err = fold("--binary", other_layout)
check(not named(out) and "does not fit" in err and other_layout in err,
      f"--binary with the longer build was used: {out!r} {err!r}")
pb = os.path.join(directory, "refused.pb.gz")
run([tool("jeprof2pprof"), "--binary", other_layout, dump, "-o", pb])
check(build_id(other_layout) not in go_pprof("-raw", "-symbolize=none", pb).stdout,
      "the refused build's id is in the pprof mappings")

# A layout that fits, another build id than the file at the dump's path: used, and the
# warning names both builds.
for flags, used in ((["--binary", same_layout], same_layout),
                    (["--path-map", f"{os.path.dirname(program)}={os.path.dirname(same_layout)}"],
                     os.path.join(os.path.dirname(same_layout), "twin")),
                    (["--sysroot", os.path.join(directory, "root")],
                     os.path.join(directory, "root") + program)):
    if not os.path.exists(used):
        os.makedirs(os.path.dirname(used), exist_ok=True)
        shutil.copy(same_layout, used)
    out, err = fold(*flags)
    check(build_id(same_layout) in err and build_id(ran) in err and program in err,
          f"{flags}: no warning naming both builds: {err!r}")
    check(err.count("another build") == 1, f"{flags}: the warning is not given once: {err!r}")

# The build that ran gone from the dump's path: nothing to compare with, no warning.
os.remove(program)
out, err = fold("--binary", same_layout)
check(not about_builds(err), f"without a file at the dump's path: {err!r}")
# A code mapping split in two (mprotect, madvise or mlock on part of it) is one segment:
# libc's still names __libc_start_main.
shutil.copy(ran, program)
with open(dump) as f:
    text = f.read()
line = re.search(r"^([0-9a-f]+)-([0-9a-f]+) r-xp ([0-9a-f]+) (.*libc\.so\.6)$", text, re.M)
check(line, "no libc code mapping in the dump")
start, limit, offset = (int(g, 16) for g in line.groups()[:3])
middle = start + (limit - start) // 2 // 4096 * 4096
halves = (f"{start:x}-{middle:x} r-xp {offset:08x} {line.group(4)}\n"
          f"{middle:x}-{limit:x} r-xp {offset + middle - start:08x} {line.group(4)}")
split_dump = os.path.join(directory, "split.heap")
with open(split_dump, "w") as f:
    f.write(text.replace(line.group(0), halves))
proc = run([tool("heapfold"), split_dump])
check("__libc_start_main;" in proc.stdout and "does not fit" not in proc.stderr,
      f"a split libc mapping: {proc.stdout!r} {proc.stderr!r}")

# --- a later build than the one that ran ---------------------------------------------------
def later(err):
    return [line for line in err.splitlines() if "after the dump that maps it" in line]


def strict(*flags):
    return run([tool("heapfold"), "--strict", *flags, dump], check=False)


# Rebuilt in place after the dump: -O2's code maps as -O1's did, so only the time tells.
shutil.copy(same_layout, program)  # a fresh modification time, as a build's
out, err = fold()
check(len(later(err)) == 1 and later(err)[0].startswith(f"heapfold: warning: {program} was "
                                                         "modified at ") and
      "--binary FILE" in err and "--path-map" in err, f"rebuilt in place: {err!r}")
refused = strict()
check(refused.returncode == 2 and not named(refused.stdout) and
      f"{program}: modified at " in refused.stderr and "not used under --strict" in refused.stderr
      and "--binary" in refused.stderr, f"--strict on a rebuilt program: {refused.returncode} "
                                        f"{refused.stdout!r} {refused.stderr!r}")
pb = os.path.join(directory, "strict.pb.gz")
refused = run([tool("jeprof2pprof"), "--strict", dump, "-o", pb], check=False)
check(refused.returncode == 2 and "not used under --strict" in refused.stderr,
      f"jeprof2pprof --strict: {refused.returncode} {refused.stderr!r}")

# Another build given with --binary, made after the dump, nothing at the dump's path.
os.remove(program)
other = os.path.join(directory, "later", "twin")
os.makedirs(os.path.dirname(other))
shutil.copy(same_layout, other)
out, err = fold("--binary", other)
check(len(later(err)) == 1 and f"{other} was modified at " in err, f"--binary later: {err!r}")
refused = strict("--binary", other)
check(refused.returncode == 2 and f"{other}: modified at " in refused.stderr,
      f"--strict used the later --binary: {refused.stderr!r}")

# A copy of the build that ran made after the dump, beside the original at the dump's
# path (older than the dump): a copy, not a build; no warning, named under --strict.
shutil.copy2(ran, program)  # the fixture's own time, before the dump
shutil.copy(ran, other)
out, err = fold("--binary", other)
check(named(out) and not later(err) and not about_builds(err), f"a later copy: {err!r}")
kept = strict("--binary", other)
check(named(kept.stdout) and "not used under --strict" not in kept.stderr,
      f"--strict refused a copy of the build that ran: {kept.stderr!r}")

# A file shorter than the pages the dump maps of it (its data mapped from past its end).
with open(dump) as f:
    text = f.read()
line = re.search(rf"^([0-9a-f]+)-([0-9a-f]+) rw-p ([0-9a-f]+) (.*{re.escape(program)})$", text,
                 re.M)
check(line, f"no data mapping of {program} in the dump")
long_dump = os.path.join(directory, "long.heap")
size = os.path.getsize(program)
with open(long_dump, "w") as f:
    f.write(text.replace(line.group(0), line.group(0).replace(
        f" {line.group(3)} ", f" {size + 8192:08x} ")))
proc = run([tool("heapfold"), long_dump], check=False)
check(proc.returncode == 0 and "main;twin_work" not in proc.stdout and
      f"{program} is {size} bytes, shorter than the dump maps it" in proc.stderr,
      f"a file shorter than its mappings: {proc.stdout!r} {proc.stderr!r}")
print("ok")
