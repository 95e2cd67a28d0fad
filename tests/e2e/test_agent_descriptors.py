# SPDX-License-Identifier: MIT
"""libheapkit-agent.so in a host that does what daemons do (tests/fixtures/agent_host.c,
"reopen"): while a heap delta and a CPU profile are in flight it closes every descriptor
above standard error and opens 40 files of its own. The agent's descriptors live far above
the host's (none of the 40 can take their numbers), and once the host has closed them the
server stops serving with one line, writing into none of the host's files; the host lives
on. Loopback only; every wait bounded."""

import os
import threading
import time

from agent_e2e import AGENT_SO, JEMALLOC_SO, Guest, http, listening_ports
from heapkit_e2e import check, fixture, workdir

host = fixture("agent_host")
directory = workdir()
files = os.path.join(directory, "files")
os.makedirs(files, exist_ok=True)

guest = Guest([host, "reopen", files], preload=[JEMALLOC_SO, AGENT_SO],
              env={"MALLOC_CONF": "prof:true,lg_prof_sample:0"}, stdin=True, stdout=True)


def say(line):
    guest.process.stdin.write(line + "\n")
    guest.process.stdin.flush()
    return guest.process.stdout.readline().strip()


try:
    check(guest.process.stdout.readline() == "ready\n", "the host did not start")
    url = guest.url()
    check(http(url + "/metrics")[0] == 200, "/metrics before the host closed anything")
    ports = listening_ports(guest.process.pid)
    answers = []

    def ask(path):
        try:
            answers.append((path, http(url + path, timeout=15)[0]))
        except OSError as error:  # the connection the host closed: no answer, no hang
            answers.append((path, type(error).__name__))

    in_flight = [threading.Thread(target=ask, args=(path,))
                 for path in ("/debug/pprof/heap?seconds=3", "/debug/pprof/profile?seconds=3")]
    began = time.monotonic()
    for thread in in_flight:
        thread.start()
    time.sleep(1)
    check(say("reopen") == "reopened", "the host did not reopen its files")
    for thread in in_flight:
        thread.join(timeout=20)
    check(not any(thread.is_alive() for thread in in_flight), "a request never ended")
    # Past the 3 s windows: the pages' answers are made then, and must go nowhere.
    time.sleep(max(0.0, began + 5 - time.monotonic()))
    intact = say("check")
    check(intact == "intact=40 of 40", f"the host's files after the agent's requests: {intact}")
    guest.wait_for(r"closed .*stops serving", timeout=5)
    check(say("state").startswith("handler="), "the host does not answer any more")
    check(guest.process.poll() is None, "the host died")
    print(f"in flight: {answers}; the agent said: {guest.agent_lines()[-1:]}; "
          f"was listening on {ports}")
finally:
    guest.stop()
print("ok")
