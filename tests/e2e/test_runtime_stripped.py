# SPDX-License-Identifier: MIT
"""Modules with no symbols beyond .dynsym (Debian's libraries: libstdc++, libmicrohttpd,
...) show their code as file!0x<address>: every output of the runtime says which ones and
how to get their names (apt install <package>-dbgsym, DEBUGINFOD_URLS), in the same short
line: the pprof's comments, the flame graph's subtitle, the index page, and stderr once
per module however many profiles; nothing on stderr with HEAPKIT_QUIET=1."""

import gzip
import os
import re
import sys

from heapkit_e2e import check, go_pprof, pprof_raw, run, workdir
from runtime_e2e import Service, skip_under_sanitizers

skip_under_sanitizers()
directory = workdir()
NOTE = re.compile(r"^(\S+): no symbols beyond \.dynsym \(stripped\); "
                  r"(?:apt install (\S+)-dbgsym|install its debug file \(--debug-dir\)), "
                  r"or set DEBUGINFOD_URLS$")

service = Service({"HEAPKIT_CACHE_DIR": workdir(), "HEAPKIT_QUIET": "", "DEBUGINFOD_URLS": ""})
profile = os.path.join(directory, "heap.pb.gz")
for _ in range(2):
    with open(profile, "wb") as f:
        f.write(service.get("/debug/pprof/heap"))
svg = service.get("/pprof/heap/flamegraph").decode()
index = service.get("/").decode()
lines = service.stop()

comments = [line.strip() for line in go_pprof("-comments", profile).stdout.splitlines()]
notes = [line for line in comments if NOTE.match(line)]
if not notes:
    print(f"SKIP: no stripped module left addresses unnamed here (debug files installed?): "
          f"{comments}")
    sys.exit(77)

# Each note is true: the module's frames are shown as addresses, it has no .symtab, and
# the package named is the one dpkg says installed it.
_, samples, _ = pprof_raw(profile)
frames = {frame for sample in samples for frame in sample["frames"]}
for note in notes:
    module, package = NOTE.match(note).groups()
    check(any(frame.startswith(module + "!0x") for frame in frames),
          f"{module} is said stripped, yet no frame of it is an address")
    if package:
        owners = run(["dpkg-query", "-S", module], check=False).stdout
        check(re.search(rf"^{re.escape(package)}(:\w+)?[,:]", owners, re.M),
              f"{module}: {package} is not its package: {owners!r}")

# The same lines in the SVG (under the title; all of them on hover), the index page and,
# once each, on stderr.
subtitle = re.search(r'<text id="subtitle"[^>]*><title>([^<]*)</title>', svg)
check(subtitle and all(note in subtitle.group(1) for note in notes),
      f"flame graph subtitle: {subtitle and subtitle.group(1)!r}; notes {notes}")
check(all(note in index for note in notes), f"index page lacks {notes}")
said = [line.split("]: ", 1)[1] for line in lines if NOTE.match(line.split("]: ", 1)[1])]
check(sorted(said) == sorted(set(said)) and set(notes) <= set(said),
      f"stderr: {lines}; notes {notes}")

# Quiet: nothing of it on stderr, the exact fragmentation mode's line neither (the runtime
# reads HEAPKIT_FRAGMENTATION as the agent does, and serves its page: 403 without it).
check("/debug/pprof/fragmentation" in index,
      "the index does not list /debug/pprof/fragmentation")
quiet = Service({"HEAPKIT_CACHE_DIR": workdir(), "HEAPKIT_QUIET": "1",
                 "HEAPKIT_FRAGMENTATION": "1"})
quiet.get("/debug/pprof/heap")
# (its types and figures: test_agent_fragmentation.py, the same page under the agent)
frag = gzip.decompress(quiet.get("/debug/pprof/fragmentation"))
check(b"fragmentation_space" in frag and b"fragmentation_objects" in frag,
      "the runtime's /debug/pprof/fragmentation names no fragmentation type")
# Linked into the program, the runtime keeps its sample through jemalloc's hooks, and says so.
check(b"kept through jemalloc's allocation hooks" in frag,
      "the runtime's fragmentation profile does not say the hooks keep its sample")
check(quiet.stop() == [], "HEAPKIT_QUIET=1 still said something")
print("ok")
