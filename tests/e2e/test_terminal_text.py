# SPDX-License-Identifier: MIT
"""Names that carry control characters reach no terminal raw (issue 35, low): a dump
whose mapped file's name holds ESC, BEL and DEL shows them as \\x1b, \\x07 and \\x7f in
folded output, --text, the growth table, the flame graph and the warnings; pprof output
keeps the bytes (a binary format: showing them is its consumers' part). The runtime's
answers do the same (issue 45, item 20): /pprof/symbol, whose lines jeprof prints, names
a preloaded library's function called ESC ] 0 ; ... BEL with the escapes, and a 404 does
not echo the control characters of the URL."""

import os
import re
import socket
import subprocess

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

# --- the runtime's answers: a library whose function's symbol holds ESC and BEL ---------
service = os.path.join(os.environ["HEAPKIT_BUILD_ROOT"], "examples", "example_service")
if not os.path.exists(service) or "libasan" in run(["ldd", service]).stdout:
    print("no example service without a sanitizer in this build: the runtime is not tried")
    print("ok")
    raise SystemExit(0)
source = os.path.join(directory, "hostile.c")
with open(source, "w") as f:
    f.write("int hostile_function(int x) { return x * 3 + 1; }\n")
run(["cc", "-O1", "-fPIC", "-c", source, "-o", source + ".o"])
symbol = "\x1b]0;owned\x07\x1b[31mred"
run(["objcopy", f"--redefine-sym=hostile_function={symbol}", source + ".o"])
library = os.path.join(directory, "libhostile.so")
run(["cc", "-shared", source + ".o", "-o", library])
offset = next(int(line.split()[0], 16) for line in run(["nm", "-D", library]).stdout.splitlines()
              if line.endswith(symbol))
process = subprocess.Popen([service, "0"], stdout=subprocess.PIPE, text=True,
                           env=dict(os.environ, LD_PRELOAD=library))
try:
    base = process.stdout.readline().strip().replace("listening on ", "")
    check(base.startswith("http://127.0.0.1:"), f"service said {base!r}")
    host, port = base.removeprefix("http://").split(":")
    with open(f"/proc/{process.pid}/maps") as f:
        start = min(int(line.split("-")[0], 16) for line in f if line.rstrip().endswith(library))
    address = start + offset  # the library's first mapping is at file offset 0, vaddr 0

    def ask(head, body=b""):
        with socket.create_connection((host, int(port)), timeout=60) as connection:
            connection.sendall(head + body)
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        return answer

    answer = ask(f"POST /pprof/symbol HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
                 f"Content-Length: {len(hex(address))}\r\n\r\n".encode(), hex(address).encode())
    _, _, body = answer.partition(b"\r\n\r\n")
    check(body.startswith(hex(address).encode() + b"\t"), f"/pprof/symbol: {answer!r}")
    check(b"\\x1b]0;owned\\x07\\x1b[31mred" in body and b"\x1b" not in body
          and b"\x07" not in body, f"/pprof/symbol's name is not escaped: {body!r}")
    answer = ask(f"GET /%1b]0;owned%07%1b[31mred HTTP/1.1\r\nHost: {host}\r\n"
                 f"Connection: close\r\n\r\n".encode())
    check(answer.startswith(b"HTTP/1.1 404") and b"\\x1b]0;owned\\x07" in answer and
          not re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", answer),
          f"the 404 echoes control characters: {answer!r}")
finally:
    process.terminate()
    process.wait(timeout=30)
print("ok")
