# SPDX-License-Identifier: MIT
"""What the views show of frames, on real programs: the text report agrees with go tool
pprof -top, and on an -O2 program GCC's clones (f.constprop.0,
f.isra.0) read as their function unless --keep-clone-suffixes, and the frame filters
--drop-frames, --focus and --ignore cut and select stacks in heapfold and in the pprof
that go tool pprof reads."""

import os

from heapkit_e2e import check, fixture, go_pprof, heapfold, run, run_fixture, tool, workdir

work = workdir()
program = fixture("clones")
symbols = run(["nm", program]).stdout
check("make_buffer.constprop" in symbols and "take_request.isra" in symbols,
      f"the compiler made no clones to test with: {symbols}")
dump = run_fixture(program, work)


def frames_of(stacks):
    return {frame for stack in stacks for frame in stack.split(";")}


merged = heapfold(dump)
total = sum(merged.values())
check({"make_buffer", "take_request"} <= frames_of(merged)
      and not any("." in f and f.startswith(("make_buffer", "take_request"))
                  for f in frames_of(merged)),
      f"clones not merged into their functions: {merged}")
apart = heapfold("--keep-clone-suffixes", dump)
check(any(f.startswith("make_buffer.constprop.") for f in frames_of(apart))
      and any(f.startswith("take_request.isra.") for f in frames_of(apart)),
      f"--keep-clone-suffixes: {apart}")

# --drop-frames cuts the matching frame and all it calls; the bytes stay with the caller.
dropped = heapfold("--drop-frames", "take_request", dump)
check("take_request" not in frames_of(dropped) and sum(dropped.values()) == total,
      f"--drop-frames take_request: {dropped}")
check(any(stack.endswith(";main") for stack in dropped), f"nothing left at main: {dropped}")

# --focus and --ignore split the stacks between them.
focused = heapfold("--focus", "make_buf", dump)
ignored = heapfold("--ignore", "make_buf", dump)
check(focused and all("make_buffer" in stack for stack in focused), f"--focus: {focused}")
check(ignored and not any("make_buffer" in stack for stack in ignored), f"--ignore: {ignored}")
check(sum(focused.values()) + sum(ignored.values()) == total,
      f"--focus and --ignore do not add up to the whole: {focused} {ignored}")

# The same in pprof, as go tool pprof shows it.
def pprof_top(*args):
    out = os.path.join(work, "view.pb.gz")
    run([tool("jeprof2pprof"), *args, "-o", out, dump])
    return go_pprof("-top", "-nodecount=100", out).stdout


top = pprof_top()
check(" make_buffer\n" in top and " take_request\n" in top and ".constprop" not in top,
      f"go tool pprof -top of merged clones:\n{top}")
check("make_buffer.constprop." in pprof_top("--keep-clone-suffixes"),
      "--keep-clone-suffixes in pprof")
top = pprof_top("--drop-frames", "take_request")
check("take_request" not in top and " make_buffer\n" in top,
      f"drop_frames not applied by go tool pprof:\n{top}")
top = pprof_top("--ignore", "make_buf")
check("make_buffer" not in top and "take_request" in top, f"--ignore in pprof:\n{top}")

# Bad regexes are usage errors that name the flag.
proc = run([tool("heapfold"), "--focus", "(", dump], check=False)
check(proc.returncode == 1 and "--focus" in proc.stderr and "regular expression" in proc.stderr,
      f"bad --focus: {proc.returncode} {proc.stderr!r}")

# heapfold --text agrees with go tool pprof -top on the functions both name, on two programs.
def text_rows(text):
    rows = {}
    for line in text.splitlines()[2:]:
        flat, _, _, cum, _, name = line.split(None, 5)
        rows[name] = (flat, cum)
    return rows


def pprof_rows(path, index):
    rows = {}
    for line in go_pprof("-top", "-nodecount=1000", "-unit=B", f"-sample_index={index}", path
                         ).stdout.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[1].endswith("%") and parts[4].endswith("%"):
            rows[parts[5]] = (parts[0], parts[3])
    return rows


def in_units(text):
    """"1.00MB" (ours) and "1024kB" (go's) as bytes; plain counts as they are."""
    units = {"B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[:-len(unit)]) * units[unit]
    return float(text)


for program, preload in ((fixture("leaky"), True), (fixture("alloc_cpp"), False)):
    view_dump = run_fixture(program, workdir(), preload=preload)
    pb = os.path.join(work, "text.pb.gz")
    run([tool("jeprof2pprof"), view_dump, "-o", pb])
    for index in ("inuse_space", "alloc_objects"):
        ours = text_rows(run([tool("heapfold"), "-q", "--text", "--sample", index, view_dump]).stdout)
        theirs = pprof_rows(pb, index)
        named = [name for name in ours if name in theirs and not name.startswith("[")]
        check(len(named) >= 4, f"{program}: too few functions to compare: {ours} {theirs}")
        for name in named:
            for a, b in zip(ours[name], theirs[name]):
                check(abs(in_units(a) - in_units(b)) <= 0.01 * max(in_units(b), 1),
                      f"{program} {index} {name}: heapfold --text {ours[name]}, pprof {theirs[name]}")
    three = run([tool("heapfold"), "-q", "--text", "--nodecount", "3", view_dump]).stdout
    check(len(three.splitlines()) == 5, f"--nodecount 3:\n{three}")
print("ok")
