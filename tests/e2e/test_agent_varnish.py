# SPDX-License-Identifier: MIT
"""Debian's varnishd (a manager process and the child it forks, which serves the traffic;
it links the system jemalloc) with libheapkit-agent.so preloaded and
HEAPKIT_FOLLOW_FORKS=1, in front of a backend of the test's own on loopback: the child
serves its heap on a port of its own, a profile of the child (child_main is on its stacks,
the cached objects in it), while the manager serves its own."""

import os
import shutil
import sys
import threading
import time

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agent_e2e import AGENT_SO, Guest, fetch, free_port, http, listening_ports
from heapkit_e2e import check, pprof_raw, pprof_total, workdir

varnishd = shutil.which("varnishd") or "/usr/sbin/varnishd"
if not os.path.exists(varnishd):
    print("varnishd not installed (Debian: varnish): skipping")
    sys.exit(77)

directory = workdir()
BODY = b"x" * 60000


class Backend(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.send_header("Cache-Control", "max-age=600")
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


backend = ThreadingHTTPServer(("127.0.0.1", 0), Backend)
threading.Thread(target=backend.serve_forever, daemon=True).start()
front = free_port()
manager = Guest([varnishd, "-F", "-j", "none", "-n", os.path.join(directory, "varnish"),
                 "-a", f"127.0.0.1:{front}", "-b", f"127.0.0.1:{backend.server_port}",
                 "-s", "malloc,64m", "-T", "none"],
                preload=[AGENT_SO],
                env={"MALLOC_CONF": "prof:true,lg_prof_sample:12", "HEAPKIT_FOLLOW_FORKS": "1"})
try:
    manager_url = manager.url()
    child = None
    for _ in range(150):  # up to about 30 s: the VCL compiled, the child started
        check(manager.process.poll() is None, f"varnishd exited: {manager.lines[-20:]}")
        try:
            status, _, _ = http(f"http://127.0.0.1:{front}/warm", timeout=5)
            if status == 200:
                break
        except OSError:
            pass
        time.sleep(0.2)
    else:
        check(False, f"varnish did not serve within 30 s: {manager.lines[-20:]}")
    for i in range(200):  # 200 objects of 60 kB cached in the child
        http(f"http://127.0.0.1:{front}/object/{i}")

    with open(f"/proc/{manager.process.pid}/task/{manager.process.pid}/children") as f:
        kids = [int(p) for p in f.read().split()]
    serving = {pid: listening_ports(pid) for pid in kids}
    child = next((pid for pid, ports in serving.items() if front in ports), None)
    check(child is not None, f"no child of the manager listens on {front}: {serving}")
    for _ in range(50):  # a followed child serves a second after its fork (up to 10 s)
        agent_ports = listening_ports(child) - {front}
        if agent_ports:
            break
        time.sleep(0.2)
    check(len(agent_ports) == 1, f"the child listens on {listening_ports(child)}")
    child_url = f"http://127.0.0.1:{agent_ports.pop()}"
    check(child_url != manager_url, "the child serves on the manager's port")

    status, _, cmdline = http(child_url + "/pprof/cmdline")
    check(status == 200 and b"varnishd" in cmdline, f"child /pprof/cmdline: {status}")
    heap = fetch(child_url, "/debug/pprof/heap", os.path.join(directory, "child.pb.gz"))
    _, samples, _ = pprof_raw(heap)
    in_child = pprof_total(samples, "inuse_space", lambda f: "child_main" in f)
    check(in_child > 0, "the child's heap profile has nothing under child_main")
    total = pprof_total(samples, "inuse_space", lambda f: True)
    check(total >= 200 * 60000, f"the child's heap holds {total} bytes; 200 objects of 60 kB "
                                "are cached in it")

    mheap = fetch(manager_url, "/debug/pprof/heap", os.path.join(directory, "manager.pb.gz"))
    _, msamples, _ = pprof_raw(mheap)
    check(pprof_total(msamples, "inuse_space", lambda f: "child_main" in f) == 0,
          "the manager's port serves the child's heap")
    print(f"varnish: child {child} serves {total} bytes on {child_url}, manager on {manager_url}")
finally:
    manager.stop(timeout=20)
    backend.shutdown()
print("ok")
