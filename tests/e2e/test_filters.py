# SPDX-License-Identifier: MIT
"""--focus, --ignore, --hide and --drop-frames match what the output shows: names, unnamed
frames' function identities ("app!0x1159") and address texts ("app+0x1159", where no name
is looked up); a pattern that matches no frame is a warning, not a silent empty output."""

import os
import re
import shutil

from heapkit_e2e import check, fixture, heapfold, run, run_fixture, tool, workdir

directory = workdir()
name = "filtered_app"
app = os.path.join(directory, name)
shutil.copy(fixture("alloc_c_pie"), app)
run(["strip", "--strip-all", app])
dump = run_fixture(app, directory)

starts = {}
for line in run(["nm", "--defined-only", fixture("alloc_c_pie")]).stdout.splitlines():
    address, kind, symbol = line.split()
    if kind in "Tt":
        starts[symbol] = int(address, 16)
hold = f"{name}!0x{starts['hold_pages']:x}"
zeroed = f"{name}!0x{starts['keep_zeroed']:x}"

everything = heapfold(dump)
check(any(s.endswith(";" + hold) for s in everything), f"{hold} is no leaf: {list(everything)}")

# --focus on an unnamed function, as the output spells it (quoted: '!' in a shell).
focused = heapfold("--focus", re.escape(hold), dump)
check(focused and all(hold in s.split(";") for s in focused),
      f"--focus {hold} kept {list(focused)}")
check(sum(focused.values()) == sum(v for s, v in everything.items() if hold in s.split(";")),
      "--focus kept other bytes than the stacks through it")
# The part after '!' alone, as a user copies it from a line.
check(heapfold("--focus", f"0x{starts['hold_pages']:x}$", dump) == focused,
      "--focus on the address alone differs")
ignored = heapfold("--ignore", re.escape(hold), dump)
check(ignored and not any(hold in s for s in ignored), f"--ignore {hold} kept {list(ignored)}")

# --drop-frames on an unnamed function: its caller (main's identity) is the leaf.
dropped = heapfold("--drop-frames", re.escape(zeroed), dump)
check(not any(zeroed in s for s in dropped), f"--drop-frames {zeroed} left it: {list(dropped)}")
check(sum(dropped.values()) == sum(everything.values()), "--drop-frames changed the total")

# --hide on an unnamed function in the middle of stacks: its callers and callees become
# neighbours, nothing else changes, and the total stays.
middle = next((f for s in everything for f in s.split(";")[1:-1] if f.startswith(name + "!")),
              None)
check(middle is not None, f"no unnamed frame in the middle of a stack: {list(everything)}")
hidden = heapfold("--hide", re.escape(middle), dump)
check(not any(middle in s.split(";") for s in hidden), f"--hide {middle} left it: {list(hidden)}")
check(sum(hidden.values()) == sum(everything.values()), "--hide changed the total")
expected = {}
for stack, value in everything.items():
    shown = ";".join(f for f in stack.split(";") if f != middle)
    expected[shown] = expected.get(shown, 0) + value
check(hidden == expected, f"--hide {middle}: {hidden} instead of {expected}")

# Where nothing is named, frames show their address text, and that is what matches.
bare = heapfold("--no-symbolize", dump)
address = next(f for s in bare for f in s.split(";") if f.startswith(name + "+0x"))
focused = heapfold("--no-symbolize", "--focus", re.escape(address), dump)
check(focused and all(address in s.split(";") for s in focused),
      f"--no-symbolize --focus {address} kept {list(focused)}")
dropped = heapfold("--no-symbolize", "--drop-frames", re.escape(address), dump)
check(not any(address in s.split(";") for s in dropped),
      f"--no-symbolize --drop-frames {address} left it: {list(dropped)}")

# A pattern that matches no frame: a warning naming it, exit status 0.
for flag, effect in (("--focus", "nothing is shown"), ("--ignore", "nothing is left out"),
                     ("--hide", "nothing is hidden"), ("--drop-frames", "nothing is cut")):
    for view in ([], ["--text"]):
        proc = run([tool("heapfold"), *view, flag, "no_such_function", dump])
        check(re.search(rf"^heapfold: warning: {flag} 'no_such_function' matches no frame: "
                        rf"{effect}", proc.stderr, re.M),
              f"heapfold {view} {flag} no_such_function: {proc.stderr!r}")
    proc = run([tool("heapfold"), flag, re.escape(hold), dump])
    check("matches no frame" not in proc.stderr, f"{flag} {hold}: {proc.stderr!r}")
proc = run([tool("jeprof2pprof"), "--focus", "no_such_function", dump, "-o",
            os.path.join(directory, "out.pb.gz")])
check("--focus 'no_such_function' matches no frame" in proc.stderr,
      f"jeprof2pprof: {proc.stderr!r}")
check(run([tool("heapfold"), "-q", "--focus", "no_such_function", dump]).stderr == "",
      "--quiet printed the warning")
print("ok")
