# SPDX-License-Identifier: MIT
"""Debian's varnishd (a manager process and the child it forks, which serves the traffic;
it links the system jemalloc) with libheapkit-agent.so preloaded and
HEAPKIT_FOLLOW_FORKS=1, in front of a backend of the test's own on loopback: the child
serves its heap on a port of its own, a profile of the child (child_main is on its stacks,
the cached objects in it), while the manager serves its own. Ports are predictable: with
HEAPKIT_LISTEN=127.0.0.1:P the manager serves on P and its child on P+1, and the
manager's index page and /metrics list both with pid, role and URL; a child killed and
restarted by the manager serves on P+1 again, and the lists name the new child only."""

import os
import re
import shutil
import signal
import socket
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


def two_free_ports():
    """P such that P and P+1 on 127.0.0.1 were free a moment ago."""
    for _ in range(50):
        port = free_port()
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1))
                return port
            except OSError:
                continue
    check(False, "no two free ports in a row")


def agent_child(manager_pid, old=None, timeout=30):
    """(pid, agent port) of the manager's child that serves the agent (not `old`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{manager_pid}/task/{manager_pid}/children") as f:
            kids = [int(p) for p in f.read().split() if int(p) != old]
        for pid in kids:
            try:
                ports = listening_ports(pid) - {front}
            except OSError:
                continue
            if ports and front in listening_ports(pid):
                return pid, ports.pop()
        time.sleep(0.2)
    check(False, f"no child of the manager served within {timeout} s")


def listed(url, pid):
    """The manager's index page and /metrics name `pid` with its URL."""
    status, _, index = http(url + "/")
    status_m, _, metrics = http(url + "/metrics")
    check(status == 200 and status_m == 200, f"index {status}, metrics {status_m}")
    rows = re.findall(r"<tr><td>(\d+)</td><td>(\w+)</td><td>[^<]*</td><td><a href=\"([^\"]+)\"",
                      index.decode())
    series = re.findall(r'heapkit_agent_serving\{pid="(\d+)",role="(\w+)",name="[^"]*",'
                        r'url="([^"]+)"\} 1', metrics.decode())
    return {(int(p), role, u) for p, role, u in rows}, {(int(p), role, u) for p, role, u in series}


backend = ThreadingHTTPServer(("127.0.0.1", 0), Backend)
threading.Thread(target=backend.serve_forever, daemon=True).start()
front = free_port()
agent_port = two_free_ports()
manager = Guest([varnishd, "-F", "-j", "none", "-n", os.path.join(directory, "varnish"),
                 "-a", f"127.0.0.1:{front}", "-b", f"127.0.0.1:{backend.server_port}",
                 "-s", "malloc,64m", "-T", "none"],
                preload=[AGENT_SO],
                env={"MALLOC_CONF": "prof:true,lg_prof_sample:12", "HEAPKIT_FOLLOW_FORKS": "1",
                     "HEAPKIT_LISTEN": f"127.0.0.1:{agent_port}"})
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

    # --- predictable ports, and the manager's lists ---------------------------------
    check(manager_url == f"http://127.0.0.1:{agent_port}", f"the manager serves on {manager_url}")
    check(child_url == f"http://127.0.0.1:{agent_port + 1}",
          f"the child serves on {child_url}, not the manager's port + 1")
    expected = {(manager.process.pid, "first", manager_url + "/"),
                (child, "forked", child_url + "/")}
    rows, series = listed(manager_url, child)
    check(rows == expected, f"the manager's index lists {rows}, not {expected}")
    check(series == expected, f"the manager's /metrics lists {series}, not {expected}")

    # --- a child killed and restarted by the manager takes the same port ------------
    os.kill(child, signal.SIGKILL)
    restarted, port = agent_child(manager.process.pid, old=child, timeout=60)
    check(port == agent_port + 1, f"the restarted child serves on {port}")
    rows, series = listed(manager_url, restarted)
    expected = {(manager.process.pid, "first", manager_url + "/"),
                (restarted, "forked", f"http://127.0.0.1:{port}/")}
    check(rows == expected and series == expected,
          f"after the restart the manager lists {rows} and {series}, not {expected}")
    print(f"varnish: the restarted child {restarted} serves on {port}")
finally:
    manager.stop(timeout=20)
    backend.shutdown()
print("ok")
