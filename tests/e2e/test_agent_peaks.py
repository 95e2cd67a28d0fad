# SPDX-License-Identifier: MIT
"""The agent's peak watcher (HEAPKIT_PEAKS_*) in Debian's redis-server, unchanged:
idle, it captures nothing; filled by redis-benchmark (loopback Unix socket, a bounded
count of requests), peak captures appear, and none once it is idle again; the page
/debug/jemalloc/peaks lists them and serves each as pprof, SVG and jestat's explanation;
POST (with HEAPKIT_CONTROL=1) and the operator's signal each take a demand capture;
/metrics counts them; heapfold and jestat read the directory as it is. A malformed
setting is one line: the agent serves without the watcher and redis runs on."""

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from agent_e2e import AGENT_SO, Guest, http
from heapkit_e2e import check, run, tool, workdir

server = shutil.which("redis-server")
client = shutil.which("redis-cli")
benchmark = shutil.which("redis-benchmark")
if not (server and client and benchmark):
    print("SKIP: redis-server, redis-cli or redis-benchmark not installed "
          "(Debian: redis-server, redis-tools)")
    sys.exit(77)

directory = workdir()
peaks = os.path.join(directory, "peaks")
socket = os.path.join(directory, "redis.sock")


def start_redis(env):
    return Guest([server, "--port", "0", "--unixsocket", socket, "--dir", directory,
                  "--save", "", "--appendonly", "no", "--daemonize", "no",
                  "--logfile", os.path.join(directory, "log")],
                 preload=[AGENT_SO], env={"MALLOC_CONF": "prof:true", **env})


def wait_for_socket():
    for _ in range(50):
        if os.path.exists(socket) and run([client, "-s", socket, "PING"],
                                          check=False).stdout.strip() == "PONG":
            return
        time.sleep(0.2)
    check(False, "redis did not answer PING")


def stems(trigger=None):
    found = sorted(os.path.basename(p)[:-len(".meta")] for p in glob.glob(f"{peaks}/*.meta"))
    return [s for s in found if trigger is None or s.endswith("." + trigger)]


redis = start_redis({"HEAPKIT_PEAKS_DIR": peaks, "HEAPKIT_PEAKS_INTERVAL_MS": "100",
                     "HEAPKIT_PEAKS_FLOOR": "8M", "HEAPKIT_PEAKS_MIN_INTERVAL_MS": "1000",
                     "HEAPKIT_PEAKS_GROWTH_PERCENT": "20", "HEAPKIT_PEAKS_KEEP": "20",
                     "HEAPKIT_PEAKS_SIGNAL": "USR2", "HEAPKIT_CONTROL": "1"})
try:
    url = redis.url()
    wait_for_socket()
    time.sleep(1.5)  # idle: 15 looks
    check(stems() == [], f"captures of an idle redis: {stems()}")

    # Filled: 60000 distinct keys of 2 kB (some 150 MB), a bounded count of requests.
    run([benchmark, "-s", socket, "-n", "60000", "-c", "4", "-P", "16", "-r", "100000000",
         "-d", "2048", "-t", "set", "-q"])
    time.sleep(1.5)  # the held-back capture at the window's end
    peak = stems("peak")
    check(len(peak) >= 2, f"peak captures under load: {stems()}; agent: {redis.agent_lines()}")
    time.sleep(1.5)  # idle again
    check(stems("peak") == peak, f"captures while idle: {sorted(set(stems()) - set(peak))}")

    status, _, page = http(url + "/debug/jemalloc/peaks")
    check(status == 200 and all(stem in page.decode() for stem in peak), f"page: {page[:500]}")
    last = peak[-1]
    status, _, explained = http(url + f"/debug/jemalloc/peaks?capture={last}&view=stats")
    check(status == 200 and b"RSS" in explained, f"stats view: {status} {explained[:300]}")
    status, headers, svg = http(url + f"/debug/jemalloc/peaks?capture={last}&view=svg")
    check(status == 200 and b"<svg" in svg, f"svg view: {status} {svg[:200]}")
    status, _, pprof = http(url + f"/debug/jemalloc/peaks?capture={last}&view=pprof")
    check(status == 200 and pprof[:2] == b"\x1f\x8b", f"pprof view: {status} {pprof[:100]}")
    status, _, body = http(url + "/debug/jemalloc/peaks?capture=../../etc/passwd&view=heap")
    check(status == 404, f"a name not listed: {status} {body}")

    status, _, body = http(url + "/debug/jemalloc/peaks", method="POST", data=b"")
    check(status == 200 and body.decode().strip().endswith(".demand"), f"POST: {status} {body}")
    os.kill(redis.process.pid, signal.SIGUSR2)
    deadline = time.monotonic() + 5
    while len(stems("demand")) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    check(len(stems("demand")) == 2, f"demand captures: {stems('demand')}")
    check(redis.process.poll() is None, "redis ended on the signal")

    status, _, metrics = http(url + "/metrics")
    counted = dict(re.findall(r'^heapkit_peaks_captures_total\{trigger="(\w+)"\} (\d+)$',
                              metrics.decode(), re.M))
    check(int(counted["peak"]) >= len(peak) and counted["demand"] == "2", f"metrics: {counted}")

    # The tools read the directory as it is.
    heaps = sorted(glob.glob(f"{peaks}/*.peak.heap"))
    if len(heaps) >= 3:
        growth = run([tool("heapfold"), "-q", "--growth", *heaps]).stdout
        check("stack: " in growth, f"heapfold --growth: {growth}")
    stem = os.path.join(peaks, last)
    explained = run([tool("jestat"), f"{stem}.stats.json", "--dump", f"{stem}.heap",
                     "--smaps", f"{stem}.smaps"]).stdout
    check("RSS" in explained, f"jestat: {explained}")
    print(f"{len(peak)} peak captures: {peak}")
finally:
    redis.stop()

# A malformed setting: one line, the agent serves, redis runs on.
shutil.rmtree(peaks, ignore_errors=True)
redis = start_redis({"HEAPKIT_PEAKS_DIR": peaks, "HEAPKIT_PEAKS_GROWTH_PERCENT": "lots"})
try:
    redis.url()
    wait_for_socket()
    lines = [line for line in redis.agent_lines() if "PEAKS" in line]
    check(len(lines) == 1 and "HEAPKIT_PEAKS_GROWTH_PERCENT=lots" in lines[0] and
          lines[0].endswith("no peak captures"), f"agent lines: {redis.agent_lines()}")
    check(not os.path.exists(peaks), "the directory was made with the watcher off")
finally:
    redis.stop()

# A directory others may write to, /tmp's mode 1777 (sticky): refused in one line, even
# though it is this user's; nothing is written into it.
os.makedirs(peaks)
os.chmod(peaks, 0o1777)
redis = start_redis({"HEAPKIT_PEAKS_DIR": peaks})
try:
    redis.url()
    wait_for_socket()
    lines = [line for line in redis.agent_lines() if "peaks" in line]
    check(len(lines) == 1 and f"{peaks}: others may write to it (mode 1777)" in lines[0] and
          lines[0].endswith("no peak captures"), f"agent lines: {redis.agent_lines()}")
    check(os.listdir(peaks) == [], f"written into a shared directory: {os.listdir(peaks)}")
finally:
    redis.stop()
print("PASS")
