# SPDX-License-Identifier: MIT
"""Bad inputs: a message naming file (and line), exit status 1, no output file left."""

import gzip
import os
import pty
import re
import subprocess

from heapkit_e2e import check, run, tool, workdir, write_file

directory = workdir()
empty_directory = os.path.join(directory, "empty")
os.mkdir(empty_directory)
GOOD_HEAD = "heap_v2/1\n  t*: 1: 4096 [1: 4096]\n"


def write(name, data):
    return write_file(directory, name, data)


cases = [
    # (input path, pattern the message must match)
    (write("empty.heap", ""), r"empty\.heap: empty file"),
    (write("garbage.heap", "hello world\n"), r"garbage\.heap:1: not a jemalloc heap profile"),
    # Led by a NUL: random bytes led by '{' (after whitespace) are an allocation log's
    # JSON to the reader, and got its message (1 run in about 250; a CI run met it).
    (write("binary.heap", b"\0" + os.urandom(63).replace(b"\n", b"\0") + b"\0"),
     r"binary\.heap:1: binary data"),
    (write("truncated.heap", GOOD_HEAD + "@ 0x1 0x2\n"),
     r"truncated\.heap:4: expected \"t\*:\" count line after stack"),
    (write("cut_count.heap", GOOD_HEAD + "@ 0x1\n  t*: 1: 40"),
     r"cut_count\.heap:4: the last line has no newline: the dump is cut short"),
    # Cut inside a MAPPED_LIBRARIES path: what is left parses, and names another file.
    (write("cut_maps.heap", GOOD_HEAD + "@ 0x1\n  t*: 1: 4096 [1: 4096]\n\nMAPPED_LIBRARIES:\n"
           "7f0000000000-7f0000100000 r-xp 00000000 08:01 42  /usr/lib/x86_64-linux-"),
     r"cut_maps\.heap:7: the last line has no newline: the dump is cut short \(truncated\), "
     r"or was edited without its final newline"),
    (write("cut_maps.heap.gz", gzip.compress(
        (GOOD_HEAD + "@ 0x1\n  t*: 1: 4096 [1: 4096]\n\nMAPPED_LIBRARIES:\n"
         "7f0000000000-7f0000100000 r-xp 00000000 08:01 42  /usr/lib/libc.so").encode())),
     r"cut_maps\.heap\.gz:7: the last line has no newline"),
    (write("nomaps.heap", GOOD_HEAD + "@ 0x1\n  t*: 1: 4096 [1: 4096]\n"),
     r"nomaps\.heap:4: no \"MAPPED_LIBRARIES:\" section"),
    (write("header.heap", "heap profile:    1:  4096 [     1:  4096] @ heapprofile\n"),
     r"header\.heap:1: unsupported heap profile header"),
    (write("rate0.heap", "heap_v2/0\n"), r"rate0\.heap:1: sample period is 0"),
    (write("negative.heap", "heap_v2/1\n  t*: -1: 4096 [1: 4096]\n"), r"negative\.heap:2: "),
    (write("badgz.heap.gz", gzip.compress(b"heap_v2/1\n" * 1000)[:40]),
     r"badgz\.heap\.gz: truncated gzip data"),
    # A directory stands for its dumps (heapfold DIR): one without any is refused.
    (empty_directory, r"empty: is a directory"),
    (os.path.join(directory, "missing.heap"), r"missing\.heap: cannot open: No such file"),
]

unreadable = write("unreadable.heap", GOOD_HEAD)
os.chmod(unreadable, 0)
# root reads anything: run that case without the capabilities that let it. (Not as
# nobody: nobody may not reach the tools, e.g. in a clone under a private directory.)
without_dac = (["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
             if os.geteuid() == 0 else [])

for name in ("heapfold", "jeprof2pprof"):
    for path, pattern in cases + [(unreadable, r"unreadable\.heap: cannot open: Permission denied")]:
        out = os.path.join(directory, f"out-{name}")
        prefix = without_dac if path == unreadable else []
        proc = run(prefix + [tool(name), path, "-o", out], check=False)
        check(proc.returncode == 1, f"{name} {path}: exit {proc.returncode}, stderr {proc.stderr!r}")
        check(re.search(f"^{name}: error: .*{pattern}", proc.stderr),
              f"{name} {path}: message {proc.stderr!r} does not match {pattern!r}")
        check(not os.path.exists(out), f"{name} {path}: left {out} behind")
        check(not [f for f in os.listdir(directory) if ".tmp." in f], "temporary file left behind")

    proc = run([tool(name), cases[3][0], "-o", "/dev/full"], check=False)
    check(proc.returncode == 1, f"{name} accepted a broken dump for /dev/full")
    good = write("good.heap", GOOD_HEAD + "@ 0x1\n  t*: 1: 4096 [1: 4096]\n\nMAPPED_LIBRARIES:\n")
    proc = run([tool(name), good, "-o", "/dev/full"], check=False)
    check(proc.returncode == 1 and "/dev/full: cannot write" in proc.stderr,
          f"{name} to /dev/full: exit {proc.returncode}, {proc.stderr!r}")
    proc = run([tool(name), "--sample", "bogus", good], check=False)
    check(proc.returncode == 1 and "unknown sample type" in proc.stderr, f"{name} --sample bogus")
    proc = run([tool(name), "--no-such-flag", good], check=False)
    check(proc.returncode == 1, f"{name} usage error exit {proc.returncode}")

# Binary output is never written to a terminal.
controller, terminal = pty.openpty()
good = write("tty.heap", GOOD_HEAD + "@ 0x1\n  t*: 1: 4096 [1: 4096]\n\nMAPPED_LIBRARIES:\n")
proc = subprocess.run([tool("jeprof2pprof"), good], stdout=terminal, stderr=subprocess.PIPE,
                      text=True, timeout=60)
os.close(terminal)
os.close(controller)
check(proc.returncode == 1 and "refusing to write a binary profile to a terminal" in proc.stderr,
      f"binary to a terminal: exit {proc.returncode}, {proc.stderr!r}")

proc = run([tool("heapfold"), "--frame", "bogus", os.path.join(directory, "missing.heap")],
           check=False)
check(proc.returncode == 1 and "unknown frame style" in proc.stderr,
      f"--frame bogus is checked before the inputs: {proc.stderr!r}")

noaccum = write("noaccum.heap", "heap_v2/1\n  t*: 1: 4096 [0: 0]\n@ 0x1\n  t*: 1: 4096 [0: 0]\n\nMAPPED_LIBRARIES:\n")
proc = run([tool("heapfold"), "--sample", "alloc_space", noaccum], check=False)
check(proc.returncode == 1 and "prof_accum:true" in proc.stderr,
      f"alloc_space without accum: {proc.stderr!r}")
print("ok")
