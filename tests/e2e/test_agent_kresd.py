# SPDX-License-Identifier: MIT
"""libheapkit-agent.so in Debian's knot-resolver (kresd: LuaJIT, jemalloc linked): three CPU
profiles back to back while UDP queries keep its Lua policy code busy, with LuaJIT's
compiler on and jemalloc sampling every KiB; the process lives through them, answers
queries afterwards, its CPU profiles name kresd's own code and its heap profile the C
functions Lua called.

Without the agent's guarded backtrace (agent/guarded_backtrace.cpp) kresd under heap
profiling dies of SIGABRT in libgcc's _Unwind_Backtrace, called by jemalloc for a sampled
allocation whose stack passes through JIT-compiled Lua code: at this sampling rate within
seconds of the first queries, agent or not. Loopback only; the query loop is bounded in
count and time.

Then sampling every 16 bytes, where libgcc's unwinder deadlocked the host at start: it
answers, and its sampled stacks reach main (walked without libgcc)."""

import os
import shutil
import socket
import struct
import threading
import time

from agent_e2e import AGENT_SO, Guest, fetch, free_port, http
from heapkit_e2e import check, go_pprof, workdir

KRESD = shutil.which("kresd") or "/usr/sbin/kresd"
if not os.path.exists(KRESD):
    print(f"SKIP: {KRESD} is not installed (apt-get install knot-resolver)")
    raise SystemExit(77)

directory = workdir()
dns_port = free_port()
config = os.path.join(directory, "config")
with open(config, "w") as f:
    # Answers from policy alone: no query leaves the machine. LuaJIT compiles the policy's
    # Lua as it runs hot.
    f.write(f"net.listen('127.0.0.1', {dns_port}, {{ kind = 'dns' }})\n"
            "policy.add(policy.all(policy.DENY))\n")


def query(name, ident):
    labels = b"".join(bytes([len(part)]) + part.encode() for part in name.split("."))
    return struct.pack(">HHHHHH", ident, 0x0100, 1, 0, 0, 0) + labels + b"\0" + \
        struct.pack(">HH", 1, 1)


def ask(sock, ident):
    """kresd's answer to one query (its id), or None within 1 s."""
    sock.sendto(query(f"host{ident}.example.com", ident), ("127.0.0.1", dns_port))
    try:
        answer, _ = sock.recvfrom(4096)
    except socket.timeout:
        return None
    return struct.unpack(">H", answer[:2])[0]


class Load:
    """Queries as fast as kresd answers them, on a thread, until stopped (at most 120 s
    or 2 million queries)."""

    def __init__(self):
        self.answered = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        deadline = time.monotonic() + 120
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.settimeout(1)
            for ident in range(2_000_000):
                if self._stop.is_set() or time.monotonic() > deadline:
                    break
                if ask(sock, ident % 65536) is not None:
                    self.answered += 1

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)


guest = Guest([KRESD, "-n", "-c", config, directory],
              preload=[AGENT_SO],
              env={"MALLOC_CONF": "prof:true,prof_active:true,prof_accum:true,lg_prof_sample:10",
                   "HEAPKIT_START_DELAY_MS": "200"})
try:
    url = guest.url(timeout=30)
    load = Load()
    try:
        for round_ in range(3):
            before = load.answered
            try:
                profile = fetch(url, "/debug/pprof/profile?seconds=4",
                                os.path.join(directory, f"cpu{round_}.pb.gz"), timeout=60)
            except OSError as error:
                time.sleep(0.5)
                check(False, f"CPU profile {round_ + 1}: {error}; kresd: "
                             f"{guest.process.poll()}; stderr: {guest.lines[-20:]}")
            check(guest.process.poll() is None,
                  f"kresd ended ({guest.process.returncode}) during CPU profile {round_ + 1}; "
                  f"stderr: {guest.lines[-20:]}")
            check(load.answered > before,
                  f"kresd answered no query during CPU profile {round_ + 1}")
            top = go_pprof("-top", "-symbolize=none", profile).stdout
            check("kr_" in top or "lj_" in top or "uv_" in top,
                  f"CPU profile {round_ + 1} names none of kresd's code:\n{top[:2000]}")
    finally:
        load.stop()
    check(guest.process.poll() is None, f"kresd ended: {guest.process.returncode}")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(1)
        check(ask(sock, 4242) == 4242, "kresd does not answer after the profiles")
    status, _, body = http(url + "/debug/pprof/heap")
    check(status == 200 and body[:2] == b"\x1f\x8b", f"heap profile: {status} {body[:200]!r}")
    # Each query's packet is freed with its answer: the allocations since the start show it.
    allocs = fetch(url, "/debug/pprof/allocs", os.path.join(directory, "allocs.pb.gz"),
                   timeout=60)
    traces = go_pprof("-traces", "-symbolize=none", allocs).stdout
    check("kr_request_ensure_answer" in traces,
          f"no sampled stack reaches the C function Lua calls:\n{traces[:3000]}")
    check(not any("LuaJIT" in line for line in guest.agent_lines()),
          f"the agent warns of LuaJIT it has made safe: {guest.agent_lines()}")
    print(f"kresd answered {load.answered} queries through three CPU profiles")
finally:
    guest.stop()

# --- every 16 bytes sampled: LuaJIT's unwinding takes libgcc's lock, and a sampled
# allocation inside it once asked libgcc for its stack, waiting for that lock forever (kresd
# never answered and ignored SIGTERM, agent or not). With the agent, the stack is walked
# without libgcc (agent/cfi_unwinder.cpp): kresd answers, and its stacks reach main.
guest = Guest([KRESD, "-n", "-c", config, directory], preload=[AGENT_SO],
              env={"MALLOC_CONF": "prof:true,lg_prof_sample:4", "HEAPKIT_START_DELAY_MS": "200"})
try:
    url = guest.url(timeout=30)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(1)
        answered = sum(1 for ident in range(40) if ask(sock, ident) == ident)
    check(answered >= 35, f"kresd sampling every 16 bytes answered {answered} of 40 queries; "
                          f"stderr: {guest.lines[-10:]}")
    heap = fetch(url, "/debug/pprof/heap", os.path.join(directory, "heap16.pb.gz"), timeout=60)
    traces = go_pprof("-traces", "-symbolize=none", heap).stdout
    check("__libc_start_main" in traces, f"stacks do not reach main:\n{traces[:2000]}")
finally:
    guest.stop()

