# SPDX-License-Identifier: MIT
"""What the views show of frames, on a real -O2 program: GCC's clones (f.constprop.0,
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
print("ok")
