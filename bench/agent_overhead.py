#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What libheapkit-agent.so costs Debian's redis-server: redis-benchmark throughput (SET
and GET) without the agent, with it idle, and while it takes a 100 Hz CPU profile, and
the CPU time redis spent per request (all its threads, the agent's included: on a
shared machine the steadier figure); then
how long redis takes to exit after SIGTERM, without the agent and with it in the middle
of a CPU profile. The modes take turns, ROUNDS rounds; medians. Prints Markdown for
BENCHMARKS.md ("The agent in redis").

    bench/agent_overhead.py [--build build] [--rounds 5] [--requests 300000]

All modes run redis with MALLOC_CONF=prof:true (jemalloc's own sampling, every 512 KiB,
is the same in each): the difference is the agent's. Unix socket and loopback only."""

import argparse
import csv
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

MODES = ("no agent", "agent idle", "agent, 100 Hz CPU profile")


def start_redis(work, agent):
    socket = os.path.join(work, "redis.sock")
    if os.path.exists(socket):
        os.unlink(socket)
    env = dict(os.environ, MALLOC_CONF="prof:true", HEAPKIT_LISTEN="127.0.0.1:0")
    env.pop("LD_PRELOAD", None)
    if agent:
        env["LD_PRELOAD"] = agent
    redis = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", socket, "--save", "",
                              "--appendonly", "no", "--daemonize", "no", "--logfile",
                              os.path.join(work, "redis.log")],
                             env=env, stderr=subprocess.PIPE, text=True)
    url = None
    if agent:
        line = redis.stderr.readline()  # "heapkit-agent[PID]: serving http://HOST:PORT/"
        if "serving" not in line:
            sys.exit(f"the agent did not serve: {line!r}")
        url = line.split("serving ")[1].strip().rstrip("/")
    for _ in range(100):
        if os.path.exists(socket) and subprocess.run(
                ["redis-cli", "-s", socket, "PING"], capture_output=True, text=True).stdout.strip() == "PONG":
            return redis, socket, url
        time.sleep(0.1)
    sys.exit("redis did not come up")


def cpu_seconds(pid):
    """User and system CPU time of every thread of `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def benchmark(socket, requests):
    out = subprocess.run(["redis-benchmark", "-s", socket, "-n", str(requests), "-c", "16",
                          "-t", "set,get", "--csv"], capture_output=True, text=True,
                         check=True).stdout
    rows = list(csv.reader(io.StringIO(out)))
    return {row[0]: float(row[1]) for row in rows[1:]}


def profile_while(url, seconds):
    """A CPU profile at 100 Hz over the next `seconds`, on a thread."""
    def take():
        try:
            urllib.request.urlopen(f"{url}/debug/pprof/profile?seconds={seconds}&frequency=100",
                                   timeout=seconds + 30).read()
        except OSError:
            pass  # redis exited: the profile was cut short, as meant
    thread = threading.Thread(target=take)
    thread.start()
    return thread


def stop(redis):
    begin = time.monotonic()
    redis.terminate()
    redis.wait(timeout=30)
    return (time.monotonic() - begin) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=300000)
    args = parser.parse_args()
    if not shutil.which("redis-server") or not shutil.which("redis-benchmark"):
        sys.exit("needs redis-server and redis-benchmark (Debian: redis-server, redis-tools)")
    agent = os.path.abspath(os.path.join(args.build, "lib/heapkit/agent/libheapkit-agent.so"))
    rps = {mode: {"SET": [], "GET": []} for mode in MODES}
    cpu = {mode: [] for mode in MODES}
    exits = {"no agent": [], "agent, CPU profile under way": []}
    with tempfile.TemporaryDirectory(prefix="heapkit-agent-bench-") as work:
        for _ in range(args.rounds):
            for mode in MODES:
                redis, socket, url = start_redis(work, agent if mode != "no agent" else None)
                profile = None
                if "CPU" in mode:
                    profile = profile_while(url, 300)  # cut short when redis exits
                    time.sleep(0.3)
                used = cpu_seconds(redis.pid)
                for test, value in benchmark(socket, args.requests).items():
                    rps[mode][test].append(value)
                cpu[mode].append((cpu_seconds(redis.pid) - used) / (2 * args.requests) * 1e6)
                key = "no agent" if mode == "no agent" else "agent, CPU profile under way"
                if mode != "agent idle":
                    exits[key].append(stop(redis))
                else:
                    stop(redis)
                if profile is not None:
                    profile.join(timeout=30)
    print("| redis-benchmark | SET req/s | change | GET req/s | change | redis CPU µs/req | change |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    base = {test: statistics.median(rps["no agent"][test]) for test in ("SET", "GET")}
    for mode in MODES:
        cells = []
        for test in ("SET", "GET"):
            value = statistics.median(rps[mode][test])
            change = "—" if mode == "no agent" else f"{(value / base[test] - 1) * 100:+.1f}%"
            cells += [f"{value:,.0f}", change]
        used = statistics.median(cpu[mode])
        base_cpu = statistics.median(cpu["no agent"])
        cells += [f"{used:.2f}", "—" if mode == "no agent" else f"{(used / base_cpu - 1) * 100:+.1f}%"]
        print(f"| {mode} | " + " | ".join(cells) + " |")
    print()
    print("| SIGTERM to exit | median ms | max ms |")
    print("|---|--:|--:|")
    for key, values in exits.items():
        print(f"| {key} | {statistics.median(values):.1f} | {max(values):.1f} |")


if __name__ == "__main__":
    main()
