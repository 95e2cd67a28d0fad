#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What libheapkit-agent.so costs an idle host's memory: Debian's redis-server, started
several times in each mode, its VmRSS (and the anonymous part) from /proc/PID/status
after 2 s idle (and, serving, after one /metrics request):

- "prof" — MALLOC_CONF=prof:true, no agent: the baseline;
- "agent inert" — the agent preloaded, HEAPKIT_PROGRAM naming another program: what
  every process that inherits LD_PRELOAD without being meant pays;
- "agent serving" — the agent serving, 2 s after its first /metrics request;
- "agent serving, at rest" — the same 25 s after it, once jemalloc's decay (10 s dirty,
  then muzzy, purged by redis's background threads) has given back the pages of the
  request's freed buffers.

Medians. Prints Markdown for BENCHMARKS.md ("The agent's footprint") and the targets of
issue 34: inert ≤ 1 MB, serving ≤ 2 MB over "prof".

    bench/agent_rss.py [--build build] [--starts 5]

Loopback and a Unix socket only; every process started here is stopped by its PID."""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

MODES = ("prof", "agent inert", "agent serving", "agent serving, at rest")


def memory(pid):
    with open(f"/proc/{pid}/status") as f:
        text = f.read()
    return {k: int(re.search(rf"^{k}:\s+(\d+)", text, re.M).group(1)) / 1024
            for k in ("VmRSS", "RssAnon")}


def start(build, mode, directory):
    env = dict(os.environ, MALLOC_CONF="prof:true", HEAPKIT_LISTEN="127.0.0.1:0")
    env.pop("LD_PRELOAD", None)
    if mode != "prof":
        env["LD_PRELOAD"] = os.path.join(build, "lib", "heapkit", "agent", "libheapkit-agent.so")
        env["HEAPKIT_START_DELAY_MS"] = "100"
    if mode == "agent inert":
        env["HEAPKIT_PROGRAM"] = "not-redis"
    return subprocess.Popen(
        [shutil.which("redis-server"), "--port", "0", "--unixsocket",
         os.path.join(directory, "redis.sock"), "--dir", directory, "--save", "",
         "--appendonly", "no", "--daemonize", "no"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def measure(build, mode):
    with tempfile.TemporaryDirectory() as directory:
        process = start(build, mode, directory)
        try:
            if mode.startswith("agent serving"):
                line = process.stderr.readline()
                match = re.search(r"serving (http://\S+/)", line)
                if not match:
                    raise SystemExit(f"the agent did not serve: {line!r}")
                with urllib.request.urlopen(match.group(1) + "metrics", timeout=30) as answer:
                    answer.read()
            time.sleep(25 if mode.endswith("at rest") else 2)
            return memory(process.pid)
        finally:
            process.terminate()
            process.wait(timeout=10)


def measure_all(build, starts):
    results = {}
    for mode in MODES:
        runs = [measure(build, mode) for _ in range(starts)]
        results[mode] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    return results


def table(results):
    base = results["prof"]
    lines = ["| redis-server, idle | VmRSS (MB) | anonymous (MB) | over prof (MB) |",
             "|---|---|---|---|"]
    for mode in MODES:
        row = results[mode]
        lines.append(f"| {mode} | {row['VmRSS']:.1f} | {row['RssAnon']:.1f} | "
                     f"{row['VmRSS'] - base['VmRSS']:+.1f} |")
    return "\n".join(lines)


def verdicts(results):
    base = results["prof"]["VmRSS"]
    inert = results["agent inert"]["VmRSS"] - base
    serving = results["agent serving"]["VmRSS"] - base
    rest = results["agent serving, at rest"]["VmRSS"] - base
    return [f"- inert ≤ 1 MB: {inert:+.1f} MB, {'met' if inert <= 1 else 'not met'}",
            f"- serving ≤ 2 MB: {serving:+.1f} MB, {'met' if serving <= 2 else 'not met'}; "
            f"at rest {rest:+.1f} MB, {'met' if rest <= 2 else 'not met'}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    if not shutil.which("redis-server"):
        sys.exit("redis-server is not installed (Debian: redis-server)")
    results = measure_all(os.path.abspath(args.build), args.starts)
    print(table(results))
    print("\n".join(verdicts(results)))


if __name__ == "__main__":
    main()
