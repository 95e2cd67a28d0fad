#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What naming its own frames costs a service's memory: the example service
(libheapkit-runtime linked in) and Debian's CPython under libheapkit-agent.so, each started
several times per mode; VmRSS and its parts (anonymous, file-backed, shared memory such as
a memfd) from /proc/PID/status 0.5 s after start, after one /metrics request (the
server's own first request: its threads and pages), after the first /debug/pprof/heap, and
after five more; and the first profile's wall time. Medians. Prints Markdown for
BENCHMARKS.md ("The runtime's memory").

    bench/runtime_rss.py [--build build] [--starts 3] [--breakdown]

--breakdown: one start per process with indexes made ahead, and where the first profile's
growth is: each mapping's resident growth (/proc/PID/smaps: anonymous, file-backed), the
files the process holds open and maps between requests (/proc/PID/fd, map_files), and
jemalloc's stats.allocated and resident (the /metrics gauges) before and after.

Modes: "in process" (HEAPKIT_INDEXER empty: DWARF read and kept in the service, as
before address indexes), "indexes made by the first profile" (an empty cache: the
first profile runs heapkit-index), "indexes made ahead" (the cache from an earlier run).
Loopback only; every process started here is stopped by its PID."""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

MODES = ("in process", "indexes made by the first profile", "indexes made ahead")
PYTHON_SCRIPT = """
import sys
held = [bytearray(4000) for _ in range(20000)]
print(len(held), flush=True)
sys.stdin.readline()
"""


def memory(pid):
    with open(f"/proc/{pid}/status") as f:
        text = f.read()
    kb = {k: int(re.search(rf"^{k}:\s+(\d+)", text, re.M).group(1))
          for k in ("VmRSS", "RssAnon", "RssFile", "RssShmem")}
    return {k: v / 1024 for k, v in kb.items()}


def get(url):
    with urllib.request.urlopen(url, timeout=300) as answer:
        return answer.read()


class Subject:
    """A process serving its own profiles; `url` once it listens."""

    def __init__(self, kind, build, env):
        self.kind = kind
        if kind == "example service":
            self.process = subprocess.Popen(
                [os.path.join(build, "examples", "example_service"), "0"], env=env,
                stdout=subprocess.PIPE, text=True)
            self.url = self.process.stdout.readline().strip().replace("listening on ", "")
        else:
            env = dict(env, LD_PRELOAD=f"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 "
                                       f"{os.path.join(build, 'lib/heapkit/agent/libheapkit-agent.so')}",
                       MALLOC_CONF="prof:true,lg_prof_sample:14", PYTHONMALLOC="malloc",
                       HEAPKIT_LISTEN="127.0.0.1:0", HEAPKIT_START_DELAY_MS="0")
            self.process = subprocess.Popen(["/usr/bin/python3", "-c", PYTHON_SCRIPT], env=env,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True)
            self.process.stdout.readline()
            line = ""
            deadline = time.monotonic() + 30
            while "serving http" not in line and time.monotonic() < deadline:
                line = self.process.stderr.readline()
            self.url = re.search(r"serving (http://[^/\s]+)", line).group(1)

    def stop(self):
        self.process.kill()
        self.process.wait(timeout=30)


def measure(kind, build, mode, cache):
    env = dict(os.environ, HEAPKIT_CACHE_DIR=cache)
    env["HEAPKIT_INDEXER"] = "" if mode == "in process" else os.path.join(build, "cmd",
                                                                          "heapkit-index")
    subject = Subject(kind, build, env)
    try:
        time.sleep(0.5)
        rows = {"start": memory(subject.process.pid)}
        get(subject.url + "/metrics")
        time.sleep(0.3)
        rows["after /metrics"] = memory(subject.process.pid)
        began = time.monotonic()
        get(subject.url + "/debug/pprof/heap")
        first = time.monotonic() - began
        time.sleep(0.3)
        rows["first profile"] = memory(subject.process.pid)
        for _ in range(5):
            get(subject.url + "/debug/pprof/heap")
        time.sleep(0.3)
        rows["six profiles"] = memory(subject.process.pid)
        return rows, first
    finally:
        subject.stop()


def measure_all(build, starts, kinds):
    """{(kind, mode): (median rows, median first-profile seconds)}: each mode of each kind
    started `starts` times, the modes taking turns."""
    found = {}
    for kind in kinds:
        with tempfile.TemporaryDirectory(prefix="heapkit-rss-") as ahead:
            measure(kind, build, "indexes made by the first profile", ahead)  # fills `ahead`
            results = {mode: [] for mode in MODES}
            for _ in range(starts):
                for mode in MODES:
                    with tempfile.TemporaryDirectory(prefix="heapkit-rss-") as fresh:
                        cache = ahead if mode == "indexes made ahead" else fresh
                        results[mode].append(measure(kind, build, mode, cache))
            for mode in MODES:
                runs = results[mode]
                rows = {stage: {key: statistics.median(r[0][stage][key] for r in runs)
                                for key in runs[0][0][stage]} for stage in runs[0][0]}
                found[(kind, mode)] = (rows, statistics.median(r[1] for r in runs))
    return found


def smaps(pid):
    """{mapping name: {"anon": kB, "file": kB}}, summed over a name's ranges."""
    found = {}
    name = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = re.match(r"^[0-9a-f]+-[0-9a-f]+ (\S+) (\S+) \S+ \d+\s*(.*)$", line)
            if head:
                # A file's mappings by permissions and offset: the loader's segments, and
                # libelf's private mapping of a whole file (rw-p at 0) apart.
                name = head.group(3) or "[anonymous]"
                if name.startswith("/"):
                    name = f"{os.path.basename(name)} {head.group(1)}@{int(head.group(2), 16):x}"
                found.setdefault(name, {"anon": 0, "file": 0})
                continue
            field = re.match(r"^(Rss|Anonymous):\s+(\d+) kB", line)
            if field and field.group(1) == "Rss":
                found[name]["file"] += int(field.group(2))
            elif field:
                found[name]["anon"] += int(field.group(2))
                found[name]["file"] -= int(field.group(2))
    return found


def held_files(pid):
    """Regular files the process has open, and files it maps whole, privately and
    writable (libelf's way of reading an ELF file; the loader maps segments)."""
    held = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("/") and not target.startswith(("/dev/", "/proc/")):
            held.add(f"fd {fd}: {target}")
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[1] == "rw-p" and int(parts[2], 16) == 0 and \
                    parts[5].startswith("/"):
                held.add(f"mapped rw-p at 0: {parts[5].strip()}")
    return sorted(held)


def jemalloc_gauges(url):
    text = get(url + "/metrics").decode()
    return {k: int(float(v)) / 1048576 for k, v in
            re.findall(r"^heapkit_jemalloc_(allocated|resident)_bytes (\S+)$", text, re.M)}


def breakdown(kind, build):
    """Markdown: where one start's first profile grew, indexes made ahead."""
    with tempfile.TemporaryDirectory(prefix="heapkit-rss-") as ahead:
        measure(kind, build, "indexes made by the first profile", ahead)
        env = dict(os.environ, HEAPKIT_CACHE_DIR=ahead,
                   HEAPKIT_INDEXER=os.path.join(build, "cmd", "heapkit-index"))
        subject = Subject(kind, build, env)
        try:
            time.sleep(0.5)
            get(subject.url + "/metrics")
            time.sleep(0.3)
            before_gauges = jemalloc_gauges(subject.url)
            time.sleep(0.3)
            before = smaps(subject.process.pid)
            get(subject.url + "/debug/pprof/heap")
            time.sleep(0.3)
            after = smaps(subject.process.pid)
            files = held_files(subject.process.pid)
            after_gauges = jemalloc_gauges(subject.url)
        finally:
            subject.stop()
    rows = []
    for name in set(before) | set(after):
        b = before.get(name, {"anon": 0, "file": 0})
        a = after.get(name, {"anon": 0, "file": 0})
        anon, file = a["anon"] - b["anon"], a["file"] - b["file"]
        if abs(anon) + abs(file) >= 16:
            rows.append((anon + file, anon, file, name))
    rows.sort(reverse=True)
    lines = [f"{kind}, indexes made ahead: growth from after /metrics to after the first "
             "profile, by mapping (kB, 16 kB or more)", "",
             "| mapping | all | anon | file |", "|---|---:|---:|---:|"]
    lines += [f"| {n} | {t:+} | {a:+} | {f:+} |" for t, a, f, n in rows]
    total = [sum(r[i] for r in rows) for i in (0, 1, 2)]
    lines.append(f"| (sum of these) | {total[0]:+} | {total[1]:+} | {total[2]:+} |")
    lines += ["", "jemalloc (MB): " + ", ".join(
        f"{k} {before_gauges.get(k, 0):.2f} → {after_gauges.get(k, 0):.2f}"
        for k in ("allocated", "resident")),
        "", "files held between requests: " + ("; ".join(files) if files else "none")]
    return "\n".join(lines)


def growth(rows, key="VmRSS"):
    """MB the first profile added, from after the server's own first request."""
    return rows["first profile"][key] - rows["after /metrics"][key]


def table(found):
    lines = ["| process | mode | VmRSS MB: start → after /metrics → first profile → six | "
             "growth from /metrics: all / anon / file / shmem (MB) | first profile s |",
             "|---|---|---|---|---|"]
    for (kind, mode), (rows, first) in found.items():
        path = " → ".join(f"{rows[s]['VmRSS']:.1f}" for s in
                          ("start", "after /metrics", "first profile", "six profiles"))
        parts = " / ".join(f"{growth(rows, k):+.1f}"
                           for k in ("VmRSS", "RssAnon", "RssFile", "RssShmem"))
        lines.append(f"| {kind} | {mode} | {path} | {parts} | {first:.2f} |")
    return "\n".join(lines)


def kinds_for(build):
    kinds = ["example service"]
    if os.path.exists(os.path.join(build, "lib/heapkit/agent/libheapkit-agent.so")) and \
            os.path.exists("/usr/bin/python3"):
        kinds.append("CPython + agent")
    return kinds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--breakdown", action="store_true",
                        help="where one start's first profile grew, mapping by mapping")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    if args.breakdown:
        print("\n\n".join(breakdown(kind, build) for kind in kinds_for(build)))
        return 0
    print(table(measure_all(build, args.starts, kinds_for(build))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
