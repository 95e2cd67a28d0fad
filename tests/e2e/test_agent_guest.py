# SPDX-License-Identifier: MIT
"""libheapkit-agent.so as a guest, in a small C host (tests/fixtures/agent_host.c) under
LD_PRELOAD="libjemalloc.so.2 libheapkit-agent.so": it exports one symbol and needs none of
the libraries a host could carry its own copy of; a host with its own crc32 still gets
well-formed gzip from it (go tool pprof checks the checksum); the index pages link every
page; CPU profiles keep off a host's own SIGPROF handler (409, the handler and its timer
untouched); and it stays inert, with one line on stderr, without jemalloc, without
prof:true, or on a port already taken. Loopback only; every wait bounded."""

import os
import re
import subprocess

from agent_e2e import AGENT_SO, JEMALLOC_SO, Guest, fetch, http, listening_ports, refused
from heapkit_e2e import (check, closed_to_nobody, fixture, go_pprof, pprof_raw, pprof_total, run,
                         workdir)

host = fixture("agent_host")
directory = workdir()
PROF = {"MALLOC_CONF": "prof:true,lg_prof_sample:0"}


def ask(guest):
    """The host's own account of itself: its SIGPROF handler and its ticks."""
    guest.process.stdin.write("state\n")
    guest.process.stdin.flush()
    line = guest.process.stdout.readline()
    check(line.startswith("handler="), f"host answered {line!r}")
    fields = dict(field.split("=") for field in line.split())
    return fields["handler"], int(fields["ticks"])


def start(*args, preload=(JEMALLOC_SO, AGENT_SO), env=None):
    """The host, once it holds its memory."""
    guest = Guest([host, *args], preload=list(preload), env={**PROF, **(env or {})},
                  stdin=True, stdout=True)
    check(guest.process.stdout.readline() == "ready\n", "the host did not start")
    return guest


# --- what the agent exports and needs -------------------------------------------------
exported = run(["nm", "-D", "--defined-only", AGENT_SO]).stdout.split()
names = {word.split("@")[0] for word in exported if not re.fullmatch(r"[0-9a-f]+|[A-Za-z]", word)}
# libgcc's two registrations of unwind tables, under libgcc's version, are taken on purpose
# and passed on (they say a JIT registered tables: agent/agent.map).
check(names <= {"heapkit_agent_version", "HEAPKIT_AGENT", "__register_frame",
                "__register_frame_info", "GCC_3.0"},
      f"the agent exports more than its entry point: {sorted(names)[:20]}")
needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]",
                    run(["readelf", "-d", AGENT_SO]).stdout)
# libunwind.so.8 defines _Unwind_* as libgcc_s does, in the host's lookup scope: the CPU
# profiler unwinds with libdwfl, and the agent loads no libunwind.
for library in ("libz.so", "libheapkit", "libunwind"):
    check(not any(n.startswith(library) for n in needed),
          f"the agent loads {library}: its symbols could meet the host's ({needed})")

# --- a host with its own crc32: heap and CPU profiles, the index ----------------------
guest = start()
try:
    url = guest.url()
    heap = fetch(url, "/debug/pprof/heap", os.path.join(directory, "heap.pb.gz"))
    _, samples, _ = pprof_raw(heap)  # Go's gzip reader checks the CRC-32 the agent wrote
    held = pprof_total(samples, "inuse_space", lambda f: "agent_host_hold" in f)
    # 4000 blocks of 1000 bytes (jemalloc's 1024-byte class) and the array of pointers.
    check(4000 * 1000 <= held <= 4000 * 1024 + 32 * 1024,
          f"agent_host_hold holds {held} bytes in the agent's heap profile")

    profile = fetch(url, "/debug/pprof/profile?seconds=2", os.path.join(directory, "cpu.pb.gz"))
    top = go_pprof("-top", "-symbolize=none", profile).stdout
    check("agent_host_spin" in top, f"the CPU profile does not name agent_host_spin:\n{top}")

    status, headers, index = http(url + "/")
    check(status == 200 and headers["Content-Type"].startswith("text/html"), f"/: {status}")
    links = re.findall(r'href="([^"]+)"', index.decode())
    for page in ("/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/allocs",
                 "/debug/pprof/profile", "/pprof/heap", "/pprof/symbol", "/pprof/profile",
                 "/pprof/heap/flamegraph", "/pprof/profile/flamegraph", "/metrics"):
        check(page in links, f"the index does not link {page}: {links}")
    # The tree's serving processes, absolute: here only this one, at the URL it serves on.
    check([link for link in links if not link.startswith("/")] == [url + "/"],
          f"the index lists other serving processes than this one: {links}")
    for link in (link for link in links if link.startswith("/")):
        # each a page that exists (those that wait briefly: 1 s each)
        query = "?seconds=1" if "profile" in link or link.endswith("/log") else ""
        status, _, body = http(url + link + query)
        check(status != 404 and status != 405, f"index link {link}: {status} {body[:200]!r}")
    status, _, go_index = http(url + "/debug/pprof/")
    go_links = [link for link in re.findall(r'href="([^"]+)"', go_index.decode())
                if link != url + "/"]  # the tree's serving processes: this one
    check(status == 200 and go_links and all(l.startswith("/debug/pprof/") for l in go_links),
          f"/debug/pprof/ links {go_links}")
    check("seconds=" in go_index.decode(), "the index does not show the query parameters")

    status, _, body = http(url + "/pprof/conf?prof.active:false", method="POST", data=b"")
    check(status == 403, f"control is off by default, but POST /pprof/conf answered {status}")
finally:
    guest.stop()
print("exports, own crc32, heap, CPU, index: ok")

# --- a host that drops to nobody once started (as a service started as root does) -----
# It is then no longer dumpable: its /proc/self/auxv and mem are root's, its maps not. Its
# names are read from its file, which nobody must be able to read.
closed = closed_to_nobody(host) if os.geteuid() == 0 else None
if closed:
    print(f"the drop to nobody is not tried: nobody cannot read the host's file ({closed} is "
          f"closed to other users)")
elif os.geteuid() == 0:
    guest = start()
    try:
        url = guest.url()
        guest.process.stdin.write("drop\n")
        guest.process.stdin.flush()
        line = guest.process.stdout.readline()
        check(line == "dropped uid=65534\n", f"the host did not drop to nobody: {line!r}")
        profile = fetch(url, "/debug/pprof/profile?seconds=2",
                        os.path.join(directory, "dropped.pb.gz"))
        top = go_pprof("-top", "-symbolize=none", profile).stdout
        check("agent_host_spin" in top, f"after the drop, the CPU profile does not name "
                                        f"agent_host_spin:\n{top}")
    finally:
        guest.stop()
    print("CPU profile after a drop to nobody: ok")
else:
    print("not root: the drop to nobody is not tried")

# --- a host with its own SIGPROF handler and timer --------------------------------------
guest = start("sigprof")
try:
    url = guest.url()
    handler, ticks = ask(guest)
    check(handler == "own", "the host's SIGPROF handler is not in place at start")
    status, _, body = http(url + "/debug/pprof/profile?seconds=1")
    check(status == 409 and b"SIGPROF handler of its own" in body, f"CPU page: {status} {body!r}")
    handler, later = ask(guest)
    check(handler == "own", "the host's SIGPROF handler was replaced")
    status, _, _ = http(url + "/debug/pprof/heap")
    check(status == 200, f"heap page in the SIGPROF host: {status}")
    # Its timer still runs: more of its own ticks after the agent's attempt (bounded).
    for _ in range(50):
        if ask(guest)[1] > later:
            break
        subprocess.run(["sleep", "0.1"])
    else:
        check(False, f"the host's own profiling timer stopped at {later} ticks")
finally:
    guest.stop()
print("host's own SIGPROF: ok")

# --- switches: CPU off, control on, a bearer token, quiet ------------------------------
token_file = os.path.join(directory, "token")
with open(token_file, "w") as f:
    f.write("s3cret-token\n")
os.chmod(token_file, 0o644)  # every user can read it: refused, and nothing served
guest = start(env={"HEAPKIT_TOKEN_FILE": token_file})
try:
    guest.wait_for(r"token file is readable by every user of the machine \(mode 0644\): "
                   r"chmod o-rw .*not serving")
    check(not listening_ports(guest.process.pid), "served with a token every user can read")
finally:
    guest.stop()
os.chmod(token_file, 0o640)
guest = start(env={"HEAPKIT_CPU": "0", "HEAPKIT_CONTROL": "1", "HEAPKIT_TOKEN_FILE": token_file})
try:
    url = guest.url()
    bearer = {"Authorization": "Bearer s3cret-token"}
    check(http(url + "/metrics")[0] == 401, "no token, yet /metrics answered")
    status, _, body = http(url + "/debug/pprof/profile?seconds=1", headers=bearer)
    check(status == 403, f"HEAPKIT_CPU=0, but the CPU page answered {status} {body!r}")
    status, _, body = http(url + "/pprof/conf?prof.active:false", method="POST", data=b"",
                           headers=bearer)
    check(status == 200 and b"prof.active:false" in body, f"control on: {status} {body!r}")
finally:
    guest.stop()

# --- inert: no jemalloc, no prof:true, the port taken, quiet ---------------------------
first = start()
try:
    url = first.url()
    port = url.rpartition(":")[2]
    cases = {
        "no jemalloc": (start(preload=[AGENT_SO]), r"no jemalloc in this process"),
        "prof off": (start(env={"MALLOC_CONF": "prof:false"}), r"heap profiling is off"),
        "port taken": (start(env={"HEAPKIT_LISTEN": f"127.0.0.1:{port}"}), r"not serving"),
    }
    quiet = start(env={"HEAPKIT_QUIET": "1"})
    for what, (guest, pattern) in cases.items():
        try:
            guest.wait_for(pattern)
            check(len(guest.agent_lines()) == 1, f"{what}: {guest.agent_lines()}")
            check(ask(guest)[0] == "other", f"{what}: the host does not run on")
            check(not listening_ports(guest.process.pid), f"{what}: the host listens")
        finally:
            guest.stop()
    try:
        for _ in range(100):  # serving, silently (up to 10 s)
            if listening_ports(quiet.process.pid):
                break
            subprocess.run(["sleep", "0.1"])
        check(listening_ports(quiet.process.pid), "HEAPKIT_QUIET=1: not serving")
        check(quiet.agent_lines() == [], f"HEAPKIT_QUIET=1 printed {quiet.agent_lines()}")
    finally:
        quiet.stop()
    check(http(url + "/metrics")[0] == 200, "the first agent stopped serving")
finally:
    first.stop()
check(refused(url), "the port is still open after the host ended")
print("inert cases: ok")
print("ok")
