#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Throughput and latency of the runtime's HTTP server, every route at 1, 8 and 64
kept-alive connections, measured with wrk against the example service of one or more
builds (e.g. before and after a change). Prints a Markdown table for BENCHMARKS.md.

    bench/runtime_load.py [--seconds 3] LABEL=BUILD_DIR [LABEL=BUILD_DIR ...]

Loopback only; each service is started and stopped here. Answers that are not 2xx (e.g.
503 when more profile requests come at once than the server converts) are counted apart:
their rate is not throughput."""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROUTES = [
    ("GET", "/metrics"),
    ("GET", "/pprof/conf"),
    ("GET", "/pprof/cmdline"),
    ("GET", "/pprof/symbol"),
    ("POST", "/pprof/symbol"),  # 64 addresses of the service's own code
    ("GET", "/pprof/heap"),
    ("GET", "/debug/pprof/heap"),
    ("GET", "/debug/pprof/heap.folded"),
]
CONNECTIONS = (1, 8, 64)


def start(build):
    service = os.path.join(build, "examples", "example_service")
    process = subprocess.Popen([service, "0"], stdout=subprocess.PIPE, text=True)
    base = process.stdout.readline().strip().replace("listening on ", "")
    return process, base


def symbol_body(base):
    """64 addresses jeprof would ask about: return addresses from a raw dump's stacks."""
    raw = subprocess.run(["curl", "-s", base + "/pprof/heap"], capture_output=True,
                         text=True).stdout
    addresses = []
    for line in raw.splitlines():
        if line.startswith("@"):
            addresses += line.split()[1:]
    unique = list(dict.fromkeys(addresses))[:64]
    return "+".join(unique) or "0x1"


def wrk(url, method, body, connections, seconds, directory):
    script = os.path.join(directory, "request.lua")
    with open(script, "w") as f:
        f.write(f'wrk.method = "{method}"\n')
        if body:
            f.write(f'wrk.body = "{body}"\n')
            f.write('wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\n')
    threads = min(connections, 2)
    out = subprocess.run(["wrk", "-t", str(threads), "-c", str(connections), "-d",
                          f"{seconds}s", "--timeout", "10s", "--latency", "-s", script, url],
                         capture_output=True, text=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                       out)
    failed = (int(bad.group(1)) if bad else 0) + (sum(map(int, errors.groups())) if errors else 0)

    def percentile(p):
        match = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not match:
            return float("nan")
        scale = {"us": 0.001, "ms": 1, "s": 1000}[match.group(2)]
        return float(match.group(1)) * scale

    if failed:
        # What the refused ones were told, for whoever reads the table.
        answer = subprocess.run(["curl", "-s", "-X", method, "-w", "%{http_code}", url],
                                capture_output=True, text=True).stdout
        print(f"{method} {url} at {connections}: e.g. {answer[-80:]!r}", file=sys.stderr)
    ok_rate = rate * (total - failed) / total if total else 0.0
    return ok_rate, failed, total, percentile(50), percentile(99)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("builds", nargs="+", metavar="LABEL=BUILD_DIR")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("runtime_load.py: wrk is not installed (apt-get install wrk)")
    print("| build | route | conns | ok req/s | not 2xx | p50 ms | p99 ms |")
    print("|---|---|--:|--:|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as directory:
        for spec in args.builds:
            label, _, build = spec.partition("=")
            for method, path in ROUTES:
                # A fresh service per route: work a previous route left queued (or a
                # conversion still running) would be charged to this one.
                process, base = start(build)
                try:
                    body = symbol_body(base) if method == "POST" else ""
                    for connections in CONNECTIONS:
                        ok, failed, total, p50, p99 = wrk(base + path, method, body,
                                                          connections, args.seconds, directory)
                        print(f"| {label} | {method} {path} | {connections} | {ok:,.0f} | "
                              f"{failed} of {total} | {p50:.2f} | {p99:.2f} |", flush=True)
                finally:
                    process.terminate()
                    process.wait(timeout=30)


if __name__ == "__main__":
    main()
