# SPDX-License-Identifier: MIT
"""disable_aslr: same load address twice, ADDR_NO_RANDOMIZE set, argv passed through."""

import os

from heapkit_e2e import check, fixture, run, tool, workdir

ADDR_NO_RANDOMIZE = 0x0040000
probe = fixture("aslr_probe")

runs = [run([tool("disable_aslr"), probe]).stdout.split() for _ in range(2)]
check(runs[0][0] == runs[1][0], f"load address moved: {runs}")
check(int(runs[0][1], 16) & ADDR_NO_RANDOMIZE, f"personality {runs[0][1]} lacks ADDR_NO_RANDOMIZE")
with_dashes = run([tool("disable_aslr"), "--", probe]).stdout.split()
check(with_dashes[0] == runs[0][0], "'--' changed the result")

echoed = run([tool("disable_aslr"), "sh", "-c", 'printf "%s|" "$0" "$@"', "zero", "a b", ""]).stdout
check(echoed == "zero|a b||", f"argv not passed through exactly: {echoed!r}")
env = dict(os.environ, HEAPKIT_MARK="kept")
check(run([tool("disable_aslr"), "sh", "-c", "echo $HEAPKIT_MARK"], env=env).stdout == "kept\n",
      "environment not passed through")

missing = run([tool("disable_aslr"), "no-such-program-heapkit"], check=False)
check(missing.returncode == 127 and "no-such-program-heapkit" in missing.stderr,
      f"missing program: exit {missing.returncode} {missing.stderr!r}")
not_executable = os.path.join(workdir(), "plain.txt")
open(not_executable, "w").close()
denied = run([tool("disable_aslr"), not_executable], check=False)
check(denied.returncode == 126, f"non-executable: exit {denied.returncode}")
check(run([tool("disable_aslr")], check=False).returncode == 1, "no program: not a usage error")
check("ADDR_NO_RANDOMIZE" in run([tool("disable_aslr"), "--help"]).stdout, "--help")
print("ok")
