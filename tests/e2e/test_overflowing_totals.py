# SPDX-License-Identifier: MIT
"""Totals past a signed 64-bit value are refused (issue 35, low): 4 stacks of 2^62 bytes
printed a total of "-1B" and 461168601842738790400.00 %; now every view and both tools
end with a message naming the dump, exit 1 and no output file. 3 such stacks (2^63 - 2^62
under the limit) still convert."""

import os

from heapkit_e2e import check, run, tool, workdir, write_synthetic_dump

directory = workdir()
dump = write_synthetic_dump(os.path.join(directory, "huge.heap"), 4, size=2**62)
out = os.path.join(directory, "out")
for args in (["heapfold"], ["heapfold", "--text"], ["heapfold", "--svg"], ["jeprof2pprof"]):
    proc = run([tool(args[0]), *args[1:], dump, "-o", out], check=False)
    check(proc.returncode == 1 and f"{dump}: the samples' alloc_space add up to more than 2^63-1"
          in proc.stderr, f"{args}: exit {proc.returncode}, {proc.stderr!r}")
    check(not os.path.exists(out), f"{args} wrote an output")
fits = write_synthetic_dump(os.path.join(directory, "fits.heap"), 1, size=2**62)
text = run([tool("heapfold"), "--text", fits]).stdout
check("4194304.00TB total" in text and "-" not in text.split("total")[0],
      f"one stack of 2^62 bytes: {text!r}")
print("ok")
