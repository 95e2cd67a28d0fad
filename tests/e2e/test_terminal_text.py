# SPDX-License-Identifier: MIT
"""Names that carry control characters reach no terminal raw (issue 35, low): a dump
whose mapped file's name holds ESC, BEL and DEL shows them as \\x1b, \\x07 and \\x7f in
folded output, --text, the growth table, the flame graph and the warnings; pprof output
keeps the bytes (a binary format: showing them is its consumers' part)."""

import os

from heapkit_e2e import check, run, tool, workdir, write_synthetic_dump

directory = workdir()
name = "\x1b]0;owned\x07\x1b[31mred\x7fapp"
escaped = "\\x1b]0:owned\\x07\\x1b[31mred\\x7fapp"  # ';' is ':' in every frame
dumps = [write_synthetic_dump(os.path.join(directory, f"hostile.{i}.heap"), 3 + i,
                              binary=f"/opt/{name}") for i in range(3)]
for args in (["--frame", "address"], ["--text"], ["--growth"], ["--svg"], []):
    inputs = dumps if args == ["--growth"] else dumps[:1]
    proc = run([tool("heapfold"), "--no-cache", *args, *inputs])
    for stream, text in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        raw = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or ord(c) == 0x7f]
        check(not raw, f"heapfold {args}: control characters on {stream}: {raw!r} in {text!r}")
    check(escaped in proc.stdout or args in ([], ["--growth"]),
          f"heapfold {args}: the frames do not show the escapes: {proc.stdout!r}")
    check("/opt/\\x1b]0;owned\\x07" in proc.stderr,
          f"heapfold {args}: the warning does not show the escapes: {proc.stderr!r}")
pprof = os.path.join(directory, "hostile.pb.gz")
run([tool("jeprof2pprof"), "--no-cache", dumps[0], "-o", pprof])
check(os.path.getsize(pprof) > 0, "no pprof output")
print("ok")
