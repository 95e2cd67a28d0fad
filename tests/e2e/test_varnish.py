# SPDX-License-Identifier: MIT
"""Debian's varnishd (linked with the system jemalloc), profiled as the README's recipe
says: the manager runs as `varnish` and the child as `vcache`, so prof_prefix is a
directory both can write (mode 1777); the child writes its final dump on `varnishadm
stop`. heapfold reads the child's dump: varnishd's stripped static functions show as
their function's identity (varnishd!0x...), and the totals agree with jeprof's.
Skipped (77) without varnishd, or when not root (varnishd must switch users). Loopback
only: varnishd listens on a free 127.0.0.1 port; its backend is a closed port."""

import glob
import os
import re
import pwd
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from heapkit_e2e import check, heapfold, run, tool, workdir

varnishd, varnishadm = shutil.which("varnishd"), shutil.which("varnishadm")
if varnishd is None or varnishadm is None:
    print("SKIP: varnishd or varnishadm not installed (Debian: varnish)")
    sys.exit(77)
if os.geteuid() != 0:
    print("SKIP: varnishd switches to its users varnish and vcache: needs root")
    sys.exit(77)

directory = workdir()
os.chmod(directory, 0o755)
dumps = os.path.join(directory, "dumps")
os.makedirs(dumps)
os.chmod(dumps, 0o1777)  # the manager (varnish) and the child (vcache) both write here
work = os.path.join(directory, "work")
with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]

env = dict(os.environ, MALLOC_CONF=f"prof:true,prof_final:true,lg_prof_sample:12,"
                                   f"prof_prefix:{dumps}/jeprof")
env.pop("LD_PRELOAD", None)
manager = subprocess.Popen([varnishd, "-F", "-n", work, "-a", f"127.0.0.1:{port}",
                            "-b", "127.0.0.1:9", "-s", "malloc,32m"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    answered = 0
    for attempt in range(100):  # up to about 20 s to come up
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/warmup", timeout=2)
        except urllib.error.HTTPError:
            answered += 1  # 503: the backend is closed, which is what is wanted
            break
        except OSError:
            check(manager.poll() is None, f"varnishd exited with {manager.returncode}")
            time.sleep(0.2)
    check(answered, "varnishd did not answer within 20 s")
    for i in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/page/{i}", timeout=5)
        except urllib.error.HTTPError:
            pass
    run([varnishadm, "-n", work, "stop"])  # the child exits: its final dump
finally:
    manager.terminate()
    try:
        manager.wait(timeout=20)
    except subprocess.TimeoutExpired:
        manager.kill()
        manager.wait(timeout=10)

owners = {path: pwd.getpwuid(os.stat(path).st_uid).pw_name
          for path in glob.glob(f"{dumps}/jeprof.*.f.heap")}
check("vcache" in owners.values() and "varnish" in owners.values(),
      f"dumps of both users expected: {owners}")
child = max((p for p, user in owners.items() if user == "vcache"), key=os.path.getsize)

stacks = heapfold(child)
frames = {f for s in stacks for f in s.split(";")}
check(any(f.startswith("varnishd!0x") for f in frames),
      f"no stripped varnishd function shown by its identity: {sorted(frames)[:20]}")
check(sum(stacks.values()) > 1 << 20, f"the child holds {sum(stacks.values())} bytes")
err = run([tool("heapfold"), child]).stderr
named = re.search(r"files? without debug information \(([^)]*)\)", err)
check(named and "varnishd" in named.group(1).split(", ") and
      "apt install varnish-dbgsym" in err, f"varnishd's warning: {err!r}")

jeprof = run(["jeprof", "--collapsed", "--inuse_space", varnishd, child]).stdout
theirs = sum(int(line.rpartition(" ")[2]) for line in jeprof.splitlines())
ours = sum(stacks.values())
slack = len(stacks) + len(jeprof.splitlines())
check(abs(ours - theirs) <= slack, f"heapfold total {ours}, jeprof {theirs}")
print("ok")
