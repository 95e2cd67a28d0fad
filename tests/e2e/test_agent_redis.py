# SPDX-License-Identifier: MIT
"""Debian's redis-server (it links the system jemalloc) started with
LD_PRELOAD=libheapkit-agent.so and MALLOC_CONF=prof:true, no change to it, under
redis-benchmark: go tool pprof reads /debug/pprof/heap with redis' functions named and
a total within sampling error of the `DEBUG MALLCTL-STR prof.dump` taken next to it
(read by heapfold); /debug/pprof/profile names redis' functions; `jeprof --raw` reads
/pprof/heap; a BGSAVE child serves nothing while the parent serves on; SIGTERM ends it
with a CPU profile under way. Redis is reached through a Unix socket only."""

import json
import os
import shutil
import subprocess
import sys
import time

from agent_e2e import AGENT_SO, Guest, fetch, http, listening_ports, refused
from heapkit_e2e import check, go_pprof, heapfold, pprof_raw, pprof_total, run, workdir

server = shutil.which("redis-server")
client = shutil.which("redis-cli")
benchmark = shutil.which("redis-benchmark")
if not (server and client and benchmark):
    print("redis-server, redis-cli or redis-benchmark not installed "
          "(Debian: redis-server, redis-tools): skipping")
    sys.exit(77)

directory = workdir()
socket = os.path.join(directory, "redis.sock")


def cli(*args):
    return run([client, "-s", socket, *args]).stdout.strip()


def load(requests):
    """redis-benchmark in the background: SET and GET over 1000 keys of 512 bytes."""
    return subprocess.Popen([benchmark, "-s", socket, "-n", str(requests), "-c", "8", "-P", "8",
                             "-r", "1000", "-d", "512", "-t", "set,get", "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


redis = Guest([server, "--port", "0", "--unixsocket", socket, "--dir", directory,
               "--save", "", "--appendonly", "no", "--daemonize", "no",
               "--enable-debug-command", "local", "--logfile", os.path.join(directory, "log")],
              preload=[AGENT_SO], env={"MALLOC_CONF": "prof:true,lg_prof_sample:12"})
try:
    url = redis.url()
    for _ in range(50):  # up to about 10 s for the socket
        if os.path.exists(socket) and cli("PING") == "PONG":
            break
        time.sleep(0.2)
    check(cli("DEBUG", "POPULATE", "20000", "key", "256") == "OK", "DEBUG POPULATE failed")

    # --- heap under load: our page and redis' own dump, one after the other ----------
    bench = load(2_000_000)
    try:
        pprof = fetch(url, "/debug/pprof/heap", os.path.join(directory, "heap.pb.gz"))
        dump = os.path.join(directory, "redis.heap")
        check(cli("DEBUG", "MALLCTL-STR", "prof.dump", dump) == "OK", "prof.dump failed")
    finally:
        bench.terminate()
        bench.wait(timeout=10)
    # --- CPU under load: a load of its own. The first profile waits for the indexer (a
    # second or more), by which time the first benchmark may have ended: an idle redis
    # gives a CPU profile no samples.
    bench = load(50_000_000)  # ended below, long before it would end by itself
    try:
        cpu = fetch(url, "/debug/pprof/profile?seconds=3", os.path.join(directory, "cpu.pb.gz"))
        check(bench.poll() is None, "the load ended before the CPU profile did")
        raw = run(["jeprof", "--raw", url + "/pprof/heap"],
                  env=dict(os.environ, JEPROF_TMPDIR=directory, HOME=directory))
    finally:
        bench.terminate()
        bench.wait(timeout=10)

    # Under load: what DEBUG POPULATE made, the same sampled blocks in both.
    _, samples, mappings = pprof_raw(pprof)
    populate = pprof_total(samples, "inuse_space", lambda f: "debugCommand" in f)
    folded = heapfold(dump)
    theirs = sum(v for s, v in folded.items() if "debugCommand" in s.split(";"))
    check(populate > 20000 * 256, f"debugCommand holds {populate} bytes in /debug/pprof/heap")
    check(abs(populate - theirs) <= 0.01 * theirs,
          f"/debug/pprof/heap has {populate} bytes under debugCommand, prof.dump {theirs}")
    check(any("redis-check-rdb" in m for m in mappings), f"mappings: {mappings[:5]}")
    # The load gone: the whole heap, one sample standing for ~4 KiB. (Under load, the
    # benchmark's buffers come and go by a megabyte between two dumps.)
    pprof = fetch(url, "/debug/pprof/heap", os.path.join(directory, "idle.pb.gz"))
    check(cli("DEBUG", "MALLCTL-STR", "prof.dump", dump) == "OK", "prof.dump failed")
    ours = pprof_total(pprof_raw(pprof)[1], "inuse_space", lambda f: True)
    theirs = sum(heapfold(dump).values())
    check(abs(ours - theirs) <= 0.02 * theirs,
          f"/debug/pprof/heap totals {ours} bytes, redis' own prof.dump {theirs}")

    # --- /debug/jemalloc/stats: its waterfall starts from a heap profile of the moment
    # (as redis' own prof.dump above says, within sampling error of a second dump), and
    # counts the arenas redis' MEMORY MALLOC-STATS prints (the agent adds none).
    status, _, body = http(url + "/debug/jemalloc/stats?format=json")
    check(status == 200, f"/debug/jemalloc/stats: {status} {body[:300]!r}")
    page = json.loads(body)
    check(page["allocator"][0]["key"] == "profile" and page["profile_inuse"] is not None and
          abs(page["profile_inuse"] - theirs) <= 0.02 * theirs,
          f"the page's heap profile in use {page['profile_inuse']}, prof.dump {theirs}")
    check(any(row["key"] == "sampled_pages" for row in page["allocator"]),
          "the page has no row for profiling's sampled-object pages")
    printed = cli("MEMORY", "MALLOC-STATS")
    arenas = sum(1 for line in printed.splitlines() if line.startswith("arenas["))
    check(page["jemalloc"]["arenas_in_use"] == arenas,
          f"the page counts {page['jemalloc']['arenas_in_use']} arenas, redis prints {arenas}")
    print(f"/debug/jemalloc/stats: profile {page['profile_inuse']}, {arenas} arenas")

    top = go_pprof("-top", "-nodecount=200", "-symbolize=none", cpu).stdout
    named = [f for f in ("aeProcessEvents", "readQueryFromClient", "processCommand", "call",
                         "processInputBuffer") if f in top]
    check(len(named) >= 2, f"the CPU profile names too few of redis' functions:\n{top[:3000]}")

    check(raw.stdout.startswith("--- symbol") or "--- symbol" in raw.stdout,
          f"jeprof --raw: {raw.stdout[:300]!r} {raw.stderr[-300:]!r}")
    check("heap_v2/" in raw.stdout and "debugCommand" in raw.stdout,
          f"jeprof --raw has no heap_v2 profile with redis' symbols: {raw.stdout[:500]!r}")
    print(f"heap {ours} vs prof.dump {theirs}; CPU names {named}; jeprof --raw: ok")

    # --- BGSAVE under load: the child serves nothing, the parent serves on ----------------
    cli("CONFIG", "SET", "rdb-key-save-delay", "200")  # microseconds a key: seconds of child
    bench = load(2_000_000)
    try:
        check(cli("BGSAVE").startswith("Background saving started"), "BGSAVE refused")
        saver = None
        for _ in range(50):
            saver = next(iter(children(redis.process.pid)), None)
            if saver is not None:
                break
            time.sleep(0.1)
        check(saver is not None, "no BGSAVE child appeared")
        time.sleep(0.5)  # time for a child that wrongly served to bind and say so
        check(not listening_ports(saver), f"the BGSAVE child {saver} listens")
        check(not any(f"[{saver}]" in line for line in redis.agent_lines()),
              f"the BGSAVE child spoke: {redis.agent_lines()}")
        check(int(url.rpartition(":")[2]) in listening_ports(redis.process.pid),
              "the parent lost its port")
        check(http(url + "/metrics")[0] == 200, "the parent stopped serving during BGSAVE")
        check(http(url + "/debug/pprof/heap")[0] == 200, "no heap profile during BGSAVE")
    finally:
        bench.terminate()
        bench.wait(timeout=10)
    cli("CONFIG", "SET", "rdb-key-save-delay", "0")

    # --- SIGTERM with a 30 s CPU profile under way: redis ends as it would alone --------
    profile = subprocess.Popen(["curl", "-s", "-o", "/dev/null", url + "/debug/pprof/profile"])
    time.sleep(0.5)
    redis.process.terminate()
    try:
        code = redis.process.wait(timeout=10)  # not the profile's 30 s
    except subprocess.TimeoutExpired:
        check(False, "redis-server did not end within 10 s of SIGTERM")
    check(code == 0, f"redis-server exited {code} after SIGTERM")
    profile.wait(timeout=10)
    check(refused(url), "the agent's port is open after redis ended")
finally:
    redis.stop()
print("ok")
