# SPDX-License-Identifier: MIT
"""Debian's nghttpx (a master process that forks the worker serving the traffic; it links
the system jemalloc) with libheapkit-agent.so preloaded, HEAPKIT_FOLLOW_FORKS=1 and
HEAPKIT_LISTEN=127.0.0.1:P, in front of a backend of the test's own on loopback: the
master serves on P, its worker on the first free port after it (P+1 unless another
socket on the machine holds it, which a parallel test's client can); the master's index page and /metrics list both;
the worker's heap profile is the worker's (nghttpx's own code on its stacks); and the
master's heap profile holds at most 16 kB through the agent's libraries (loading them
took 100 % of it: GnuTLS's ASN.1 trees and locales). Loopback only; bounded waits."""

import os
import re
import shutil
import sys
import threading
import time

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agent_e2e import AGENT_SO, Guest, fetch, free_port, http, listening_ports
from heapkit_e2e import check, mapping_ranges, pprof_raw, pprof_total, run, workdir

nghttpx = shutil.which("nghttpx") or "/usr/sbin/nghttpx"
if not os.path.exists(nghttpx):
    print("SKIP: nghttpx is not installed (Debian: nghttp2-proxy)")
    sys.exit(77)

directory = workdir()


class Backend(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"y" * 2000
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def linked(path):
    return {os.path.realpath(m) for m in re.findall(r"=> (/\S+)", run(["ldd", path]).stdout)}


backend = ThreadingHTTPServer(("127.0.0.1", 0), Backend)
threading.Thread(target=backend.serve_forever, daemon=True).start()
front = free_port()
agent_port = free_port()
proxy = Guest([nghttpx, f"--frontend=127.0.0.1,{front};no-tls",
               f"--backend=127.0.0.1,{backend.server_port}", "--workers=1",
               "--conf=/dev/null", "--no-ocsp", "--errorlog-file=/dev/stderr",
               "--accesslog-file=/dev/null"],
              preload=[AGENT_SO],
              env={"MALLOC_CONF": "prof:true,lg_prof_sample:0", "HEAPKIT_FOLLOW_FORKS": "1",
                   "HEAPKIT_LISTEN": f"127.0.0.1:{agent_port}"})
try:
    master_url = proxy.url()
    check(master_url == f"http://127.0.0.1:{agent_port}", f"the master serves on {master_url}")
    worker_line = proxy.wait_for(rf"heapkit-agent\[(?!{proxy.process.pid}\])(\d+)\]: "
                                 rf"serving http://127\.0\.0\.1:(\d+)/")
    worker, worker_port = int(worker_line.group(1)), int(worker_line.group(2))
    check(agent_port < worker_port <= agent_port + 16,
          f"the worker serves on {worker_port}, not among the 16 ports after {agent_port}")
    worker_url = f"http://127.0.0.1:{worker_port}"
    for i in range(300):
        status, _, _ = http(f"http://127.0.0.1:{front}/page/{i}")
        check(status == 200, f"nghttpx answered {status}")

    status, _, index = http(master_url + "/")
    rows = set(re.findall(r"<tr><td>(\d+)</td><td>(\w+)</td>", index.decode()))
    check(rows == {(str(proxy.process.pid), "first"), (str(worker), "forked")},
          f"the master's index lists {rows}")
    status, _, metrics = http(master_url + "/metrics")
    check(f'heapkit_agent_serving{{pid="{worker}",role="forked"' in metrics.decode() and
          f'url="{worker_url}/"' in metrics.decode(),
          "the master's /metrics does not list the worker")

    heap = fetch(worker_url, "/debug/pprof/heap", os.path.join(directory, "worker.pb.gz"))
    _, samples, _ = pprof_raw(heap)
    check(pprof_total(samples, "inuse_space",
                      lambda frames: any("shrpx" in f or "nghttp2" in f for f in frames)) > 0,
          "the worker's heap profile has no nghttpx code on its stacks")

    # The master at rest: what the agent's libraries hold of its profile.
    core = os.path.join(os.path.dirname(AGENT_SO), "libheapkit-agent-core.so")
    agent_only = (linked(core) - linked(nghttpx)) | {os.path.realpath(core)}
    master = fetch(master_url, "/debug/pprof/heap", os.path.join(directory, "master.pb.gz"))
    _, samples, mappings = pprof_raw(master)
    ours = {mid for mid, (_, _, _, path) in mapping_ranges(mappings).items()
            if os.path.realpath(path) in agent_only}
    total = sum(s["by_type"]["inuse_space"] for s in samples)
    held = sum(s["by_type"]["inuse_space"] for s in samples
               if any(location[1] in ours for location in s["locations"]))
    print(f"nghttpx master: {held} of {total} bytes through the agent's libraries; "
          f"worker {worker} on {worker_url}")
    check(held <= 16 * 1024, f"the agent holds {held} bytes of nghttpx master's heap profile")
finally:
    proxy.stop()
    backend.shutdown()
