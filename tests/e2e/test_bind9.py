# SPDX-License-Identifier: MIT
"""Debian's named (BIND 9.18, jemalloc through libisc), profiled as the README's recipe
says, serving a zone of 3000 records: its allocations go through libisc's isc__mem_get,
which is cut by default (kept by --keep-allocator-frames), so the callers that asked are
the leaves; its prof_interval series is one process; each library is warned about once.
Runs in a network namespace of its own (only loopback: named reaches for the root servers
at start). Skipped (77) without named and dig, or when not root."""

import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import time

if os.environ.get("HEAPKIT_NETNS") != "1":
    if shutil.which("named") is None or shutil.which("dig") is None:
        print("SKIP: named or dig not installed (Debian: bind9, bind9-dnsutils)")
        sys.exit(77)
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        print("SKIP: needs root for a network namespace of its own (named reaches outside)")
        sys.exit(77)
    proc = subprocess.run(["unshare", "--net", "--", sys.executable, __file__],
                          env=dict(os.environ, HEAPKIT_NETNS="1"), timeout=120)
    sys.exit(proc.returncode)
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)

from heapkit_e2e import check, heapfold, run, tool, workdir  # noqa: E402

directory = workdir()
dumps = os.path.join(directory, "dumps")
os.makedirs(dumps)
with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
records = 3000
with open(os.path.join(directory, "zone"), "w") as zone:
    zone.write("$TTL 300\n@ IN SOA ns.example.test. admin.example.test. 1 3600 600 86400 300\n"
               "@ IN NS ns.example.test.\nns IN A 127.0.0.1\n")
    for i in range(records):
        zone.write(f"host{i} IN A 10.0.{i // 250}.{i % 250}\n")
config = os.path.join(directory, "named.conf")
with open(config, "w") as f:
    f.write(f'options {{ directory "{directory}"; listen-on port {port} {{ 127.0.0.1; }}; '
            f'listen-on-v6 {{ none; }}; recursion no; pid-file "{directory}/named.pid"; }};\n'
            'controls { };\n'
            f'zone "example.test" {{ type primary; file "{directory}/zone"; }};\n')
env = dict(os.environ, MALLOC_CONF=f"prof:true,prof_final:true,lg_prof_sample:10,"
                                   f"lg_prof_interval:18,prof_prefix:{dumps}/jeprof")
env.pop("LD_PRELOAD", None)
named = subprocess.Popen(["named", "-g", "-n", "1", "-c", config], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    answer = ""
    for _ in range(50):  # up to about 20 s to load the zone and answer
        answer = subprocess.run(["dig", "+short", "+time=1", "+tries=1", "-p", str(port),
                                 "@127.0.0.1", "host7.example.test"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        if answer == "10.0.0.7":  # else ";; communications error ...": not up yet
            break
        check(named.poll() is None, f"named exited with {named.returncode}")
        time.sleep(0.2)
    check(answer == "10.0.0.7", f"named answered {answer!r}")
finally:
    named.terminate()
    try:
        named.wait(timeout=20)
    except subprocess.TimeoutExpired:
        named.kill()
        named.wait(timeout=10)

series = glob.glob(f"{dumps}/jeprof.*.i*.heap")
check(len(series) >= 5, f"named wrote {len(series)} interval dumps")
last = max(series, key=lambda d: int(re.search(r"\.(\d+)\.i\d+\.heap$", d).group(1)))

WRAPPER = re.compile(r"^isc__mem(pool)?_(get|reget|allocate|reallocate|strdup|strndup)$")
stacks = heapfold(last)
frames = {f for s in stacks for f in s.split(";")}
check(not any(WRAPPER.match(f) for f in frames),
      f"libisc's allocation wrappers are left: {sorted(f for f in frames if 'isc__mem' in f)}")
check(any(f.startswith("dns_") for f in frames), f"no dns_ caller: {sorted(frames)[:30]}")
kept = heapfold("--keep-allocator-frames", last)
check(any(f == "isc__mem_get" for s in kept for f in s.split(";")),
      "--keep-allocator-frames lost isc__mem_get")

proc = run([tool("heapfold"), "--growth", *series])
check(re.search(rf"{len(series)} dumps in 1 run", proc.stdout), f"{proc.stdout[:300]!r}")
summaries = re.findall(r"^heapfold: warning: \d+ files? without debug information", proc.stderr,
                       re.M)
check(len(summaries) == 1, f"not one summary of the files without names: {proc.stderr!r}")
# --verbose: each file its own line, once over the whole series.
verbose = run([tool("heapfold"), "--growth", "--verbose", *series]).stderr
warned = re.findall(r"^heapfold: warning: (\S+): \d+ of \d+ address", verbose, re.M)
check(warned and len(warned) == len(set(warned)), f"a file warned about twice: {verbose!r}")
print("ok")
