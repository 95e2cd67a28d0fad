# SPDX-License-Identifier: MIT
"""What a CPU profile does to its host's signals (tests/fixtures/signal_host.c, under
LD_PRELOAD="libjemalloc.so.2 libheapkit-agent.so"):
- threads that sleep 1 ms at a time are not interrupted: their nanosleep/poll calls see
  no EINTR during profiles (a process-wide timer signalled whichever thread the kernel
  picked: 49-54 EINTRs in 8 s), and the samples land on the thread that spent the CPU
  (signal_host_spin), not on sleeping threads in clock_nanosleep;
- a host that installs a SIGPROF handler and ITIMER_PROF of its own while a profile runs
  keeps them when the profile ends, and lives (the agent used to put its saved
  disposition back: "Profiling timer expired", exit 155).
Loopback only; every wait bounded."""

import os
import threading
import time

from agent_e2e import AGENT_SO, JEMALLOC_SO, Guest, fetch, http
from heapkit_e2e import check, fixture, go_pprof, workdir

directory = workdir()


def start():
    guest = Guest([fixture("signal_host")], preload=[JEMALLOC_SO, AGENT_SO],
                  env={"MALLOC_CONF": "prof:true", "HEAPKIT_START_DELAY_MS": "100"},
                  stdin=True, stdout=True)
    check(guest.process.stdout.readline() == "ready\n", "the host did not start")
    return guest


def state(guest):
    guest.process.stdin.write("state\n")
    guest.process.stdin.flush()
    line = guest.process.stdout.readline()
    check(line.startswith("eintr="), f"host answered {line!r}")
    return {key: value for key, value in (field.split("=") for field in line.split())}


def top_share(profile, name):
    """The share of samples whose stack holds `name` (go tool pprof -top's cum %)."""
    top = go_pprof("-top", "-cum", "-symbolize=none", "-nodefraction=0", profile).stdout
    for line in top.splitlines():
        if line.rstrip().endswith(name):
            return float(line.split()[4].rstrip("%")) / 100, top
    return 0.0, top


# --- sleeping threads are left alone; samples go where the CPU went --------------------
guest = start()
try:
    url = guest.url()
    before = int(state(guest)["eintr"])
    for round_ in range(2):
        profile = fetch(url, "/debug/pprof/profile?seconds=3&frequency=250",
                        os.path.join(directory, f"cpu{round_}.pb.gz"))
        share, top = top_share(profile, "signal_host_spin")
        check(share > 0.8, f"signal_host_spin holds {share:.0%} of the samples:\n{top[:1500]}")
        sleeping, _ = top_share(profile, "clock_nanosleep")
        check(sleeping < 0.05, f"{sleeping:.0%} of the samples are in sleeping threads:\n{top}")
    after = int(state(guest)["eintr"])
    check(after == before, f"the host's sleeping threads saw {after - before} EINTRs "
                           "during two CPU profiles")
    print(f"two profiles: EINTR {before} -> {after}, signal_host_spin {share:.0%}")
finally:
    guest.stop()

# --- the host's own SIGPROF handler, installed during a profile, stays ----------------
guest = start()
try:
    url = guest.url()
    answer = {}
    profiling = threading.Thread(
        target=lambda: answer.update(zip(("status", "headers", "body"),
                                         http(url + "/debug/pprof/profile?seconds=6"))),
        daemon=True)
    profiling.start()
    time.sleep(2.5)
    guest.process.stdin.write("install\n")
    guest.process.stdin.flush()
    installed = guest.process.stdout.readline()
    check("handler=own" in installed, f"the host could not install its handler: {installed!r}")
    profiling.join(timeout=30)
    check(answer.get("status") == 200, f"the profile answered {answer.get('status')}")
    time.sleep(0.5)  # the host's own timer ticks on
    check(guest.process.poll() is None,
          f"the host ended ({guest.process.returncode}) when the profile ended")
    first = state(guest)
    time.sleep(0.5)
    second = state(guest)
    check(first["handler"] == "own" and second["handler"] == "own",
          f"the host's SIGPROF handler was replaced: {first} {second}")
    check(int(second["ticks"]) > int(first["ticks"]), f"the host's own timer stopped: {second}")
    status, _, body = http(url + "/debug/pprof/profile?seconds=1")
    check(status == 409, f"a profile over the host's own handler answered {status}")
finally:
    guest.stop()
