# SPDX-License-Identifier: MIT
"""libheapkit-agent.so serves only in the process the operator meant, and is silent in
every other process that inherits LD_PRELOAD:
- by default the first process of the tree: a shell that runs a compiler (as varnishd
  runs cc for its VCL) and then execs the host: cc says nothing and takes no port, and
  the host (the shell's pid after exec) serves;
- with HEAPKIT_PROGRAM: a wrapper shell that waits for the program stays silent and
  takes no port, the program serves, and its /pprof/cmdline is the program's;
- without it, behind a wrapper that forks the program (timeout, a script without exec):
  the same, and the serving line and index page name the program;
- a process the agent stays out of loads nothing of it beyond the loader (no libdw, no
  HTTP server, no C++ library of the agent's).
Loopback only; every wait bounded."""

import os
import re
import shutil
import time

from agent_e2e import AGENT_SO, JEMALLOC_SO, Guest, http, listening_ports
from heapkit_e2e import check, fixture

host = fixture("agent_host")
cc = shutil.which("cc") or shutil.which("gcc")
PROF = {"MALLOC_CONF": "prof:true,lg_prof_sample:19"}


def speakers(guest):
    return {int(m.group(1)) for line in guest.agent_lines()
            if (m := re.search(r"heapkit-agent\[(\d+)\]", line))}


# --- default: the first process; a compiler it runs is silent --------------------------
script = f'{cc} -E -x c /dev/null -o /dev/null && echo compiled >&2 && exec {host}'
guest = Guest(["sh", "-c", script], preload=[JEMALLOC_SO, AGENT_SO], env=PROF,
              stdin=True, stdout=True)
try:
    url = guest.url()  # the host, at the shell's pid
    guest.wait_for("compiled")
    check(speakers(guest) == {guest.process.pid},
          f"lines from other processes than the host: {guest.agent_lines()}")
    status, _, cmdline = http(url + "/pprof/cmdline")
    check(status == 200 and "agent_host" in cmdline.decode(errors="replace"),
          f"/pprof/cmdline: {status} {cmdline[:200]!r}")
finally:
    guest.stop()

# --- HEAPKIT_PROGRAM: the wrapper is silent, the program serves -------------------------
guest = Guest(["sh", "-c", f"{host}; echo done >&2"], preload=[JEMALLOC_SO, AGENT_SO],
              env={**PROF, "HEAPKIT_PROGRAM": "agent_host"}, stdin=True, stdout=True)
try:
    check(guest.process.stdout.readline() == "ready\n", "the host did not start")
    served = guest.wait_for(r"heapkit-agent\[(\d+)\]: serving http://(\S+):(\d+)/")
    program = int(served.group(1))
    check(program != guest.process.pid, "the wrapper shell serves, not the program")
    check(speakers(guest) == {program}, f"the wrapper spoke: {guest.agent_lines()}")
    time.sleep(0.5)  # past the wrapper's own start delay, had it one
    check(not listening_ports(guest.process.pid), "the wrapper shell holds a port")
    status, _, cmdline = http(f"http://{served.group(2)}:{served.group(3)}/pprof/cmdline")
    check(status == 200 and "agent_host" in cmdline.decode(errors="replace"),
          f"/pprof/cmdline: {status} {cmdline[:200]!r}")
    # The wrapper loaded the loader alone.
    with open(f"/proc/{guest.process.pid}/maps") as maps:
        mapped = maps.read()
    for library in ("libheapkit-agent-core", "libdw", "libmicrohttpd"):
        check(library not in mapped, f"the silent wrapper has {library} mapped")
finally:
    guest.stop()

# --- behind a wrapper that forks it (timeout; a script without exec): the program serves,
# the wrapper is silent and holds no port, and the serving line names the program ---------
for wrapper in (["timeout", "60", host], ["sh", "-c", f"{host}; echo done >&2"]):
    guest = Guest(wrapper, preload=[JEMALLOC_SO, AGENT_SO], env=PROF, stdin=True, stdout=True)
    try:
        check(guest.process.stdout.readline() == "ready\n", f"{wrapper[0]}: no host")
        served = guest.wait_for(r"heapkit-agent\[(\d+)\]: serving http://(\S+):(\d+)/ \((\S+);")
        program = int(served.group(1))
        check(program != guest.process.pid and served.group(4) == "agent_host",
              f"{wrapper[0]} serves, not the program: {guest.agent_lines()}")
        check(speakers(guest) == {program}, f"{wrapper[0]} spoke: {guest.agent_lines()}")
        time.sleep(0.5)
        check(not listening_ports(guest.process.pid), f"{wrapper[0]} holds a port")
        url = f"http://{served.group(2)}:{served.group(3)}"
        status, _, index = http(url + "/")
        check(f"Process {program} (agent_host)".encode() in index, "the index page's program")
    finally:
        guest.stop()

# --- a program not meant: nothing loaded, nothing said ----------------------------------
guest = Guest([host], preload=[JEMALLOC_SO, AGENT_SO],
              env={**PROF, "HEAPKIT_PROGRAM": "some-other-program",
                   "HEAPKIT_START_DELAY_MS": "0"}, stdin=True, stdout=True)
try:
    check(guest.process.stdout.readline() == "ready\n", "the host did not start")
    time.sleep(1)
    check(not guest.agent_lines(), f"a program not meant spoke: {guest.agent_lines()}")
    check(not listening_ports(guest.process.pid), "a program not meant holds a port")
    with open(f"/proc/{guest.process.pid}/maps") as maps:
        mapped = maps.read()
    check("libheapkit-agent-core" not in mapped and "libdw" not in mapped,
          "a program not meant has the agent's core or libdw mapped")
finally:
    guest.stop()
