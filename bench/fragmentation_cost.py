#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One run of what the exact fragmentation mode (HEAPKIT_FRAGMENTATION) costs Debian's
redis-server under libheapkit-agent.so: redis-benchmark (SET then GET, 16 connections over
the Unix socket, keys over a space of 100,000, 100-byte values) against redis started
with the agent, with or without the mode; prints redis-benchmark's requests per second and
redis' peak and final resident set (VmHWM, VmRSS) and its CPU time per request. Run it
twice as a pair (with and without --fragmentation), turn about, and compare medians
(BENCHMARKS.md, "The exact fragmentation mode"). With --fragmentation the samples are
kept by libheapkit-fragmentation.so's malloc interposers, preloaded beside the agent, or
with --hooks by jemalloc's allocation hooks (the agent alone); --preload-interposers
preloads them without --fragmentation too (what they cost passing calls on).

    bench/fragmentation_cost.py [--build build] [--requests 400000] [--fragmentation]
                                [--hooks] [--preload-interposers]

MALLOC_CONF=prof:true in both (jemalloc's own sampling the same); loopback only."""

import argparse
import os
import subprocess
import sys
import tempfile
import time


def status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])  # kB
    return 0


def cpu_seconds(pid):
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default="build")
    parser.add_argument("--requests", type=int, default=400_000)
    parser.add_argument("--fragmentation", action="store_true")
    parser.add_argument("--hooks", action="store_true")
    parser.add_argument("--preload-interposers", action="store_true")
    args = parser.parse_args()
    agent = os.path.abspath(os.path.join(args.build, "lib/heapkit/agent/libheapkit-agent.so"))
    interposers = os.path.join(os.path.dirname(agent), "libheapkit-fragmentation.so")
    preload = [agent]
    if args.preload_interposers or (args.fragmentation and not args.hooks):
        preload.append(interposers)
    way = "off"
    with tempfile.TemporaryDirectory() as work:
        socket = os.path.join(work, "redis.sock")
        env = dict(os.environ, MALLOC_CONF="prof:true", HEAPKIT_LISTEN="127.0.0.1:0",
                   HEAPKIT_START_DELAY_MS="0", LD_PRELOAD=" ".join(preload))
        env["HEAPKIT_FRAGMENTATION"] = "1" if args.fragmentation else "0"
        redis = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", socket, "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--logfile", os.path.join(work, "log")],
            env=env, stderr=subprocess.PIPE, text=True)
        try:
            for line in redis.stderr:  # the sampler is on before the agent serves
                if "fragmentation sampling on" in line:
                    way = "interposers" if "interposers" in line else "hooks"
                if "serving" in line:
                    break
                if "not serving" in line or "no fragmentation" in line:
                    sys.exit(line.strip())
            for _ in range(100):
                if os.path.exists(socket) and subprocess.run(
                        ["redis-cli", "-s", socket, "PING"], capture_output=True,
                        text=True).stdout.strip() == "PONG":
                    break
                time.sleep(0.1)
            before = cpu_seconds(redis.pid)
            out = subprocess.run(
                ["redis-benchmark", "-s", socket, "-n", str(args.requests), "-c", "16",
                 "-r", "100000", "-d", "100", "-t", "set,get", "--csv"],
                capture_output=True, text=True, check=True).stdout
            cpu = cpu_seconds(redis.pid) - before
            rates = {row.split(",")[0].strip('"'): float(row.split(",")[1].strip('"'))
                     for row in out.splitlines()[1:] if row.count(",") >= 1}
            print(f"fragmentation={way} "
                  f"SET={rates.get('SET', 0):.0f} GET={rates.get('GET', 0):.0f} req/s "
                  f"cpu_us_per_req={cpu * 1e6 / (2 * args.requests):.2f} "
                  f"VmHWM={status(redis.pid, 'VmHWM')} kB VmRSS={status(redis.pid, 'VmRSS')} kB")
        finally:
            redis.terminate()
            redis.wait(timeout=30)


if __name__ == "__main__":
    main()
