# SPDX-License-Identifier: MIT
"""What libheapkit-agent.so leaves in its host's heap profile: Debian's redis-server, idle,
with every allocation sampled (lg_prof_sample:0), serving after a /metrics and a heap page.
Stacks that pass through the agent or a library only the agent brought (libdw, the HTTP
server, libstdc++ for a C host, ...) hold at most 16 kB of the host's profile. Before the
loader, loading the agent's libraries (GnuTLS's constructors, locales) took about 10 % of an
idle redis's profile. The loader itself needs the C library alone (readelf -d). Redis is reached through a Unix socket only."""

import os
import re
import shutil
import sys
import time

from agent_e2e import AGENT_SO, Guest, fetch, http
from heapkit_e2e import check, mapping_ranges, pprof_raw, run, workdir

server = shutil.which("redis-server")
if not server:
    print("SKIP: redis-server is not installed (Debian: redis-server)")
    sys.exit(77)

directory = workdir()
core = os.path.join(os.path.dirname(AGENT_SO), "libheapkit-agent-core.so")


def linked(path):
    """The real paths of the libraries `path` loads (ldd)."""
    return {os.path.realpath(m) for m in re.findall(r"=> (/\S+)", run(["ldd", path]).stdout)}


# The loader, which every process that inherits LD_PRELOAD loads, needs the C library alone
# (heapkit-agent(7)): no libstdc++, libm or libgcc_s in a process the agent leaves alone.
needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]", run(["readelf", "-d", AGENT_SO]).stdout)
check(needed == ["libc.so.6"], f"the loader needs {needed}")

client = shutil.which("redis-cli")
socket = os.path.join(directory, "redis.sock")


def tcache_bytes():
    """What the thread caches of redis's jemalloc hold (MEMORY MALLOC-STATS), or None."""
    if not client:
        return None
    stats = run([client, "-s", socket, "MEMORY", "MALLOC-STATS"]).stdout
    return int(re.search(r"^tcache_bytes:\s+(\d+)", stats, re.M).group(1))


agent_only = (linked(core) - linked(server)) | {os.path.realpath(core),
                                                 os.path.realpath(AGENT_SO)}
redis = Guest([server, "--port", "0", "--unixsocket", socket,
               "--dir", directory, "--save", "", "--appendonly", "no", "--daemonize", "no"],
              preload=[AGENT_SO], env={"MALLOC_CONF": "prof:true,lg_prof_sample:0"})
try:
    url = redis.url()
    # Redis's own thread caches move by up to ~110 kB from one read to the next (each
    # redis-cli is a client whose buffers its main thread caches and frees), so the
    # baseline is the most of three reads and the figure after serving the least of three.
    tcache_bytes()  # the first read's own buffers cached
    cached = max(tcache_bytes() for _ in range(3)) if client else None
    status, _, _ = http(url + "/metrics")
    check(status == 200, f"/metrics: {status}")
    fetch(url, "/debug/pprof/heap", os.path.join(directory, "first.pb.gz"))
    time.sleep(0.5)
    profile = fetch(url, "/debug/pprof/heap", os.path.join(directory, "heap.pb.gz"))
    types, samples, mappings = pprof_raw(profile)
    ranges = mapping_ranges(mappings)
    ours = {mid for mid, (_, _, _, path) in ranges.items()
            if path and os.path.realpath(path) in agent_only}
    total = sum(s["by_type"]["inuse_space"] for s in samples)
    held = sum(s["by_type"]["inuse_space"] for s in samples
               if any(location[1] in ours for location in s["locations"]))
    print(f"idle redis: {held} of {total} bytes in use through the agent's libraries "
          f"({sorted(os.path.basename(p) for p in agent_only)})")
    check(total > 0, "an empty heap profile")
    check(held <= 16 * 1024, f"the agent holds {held} bytes of idle redis's heap profile")
    # One page at a time needs one worker: the pool makes its threads as jobs find none
    # idle (util/worker_pool.hpp), and each costs the host an arena and its background thread.
    names = []
    for task in os.listdir(f"/proc/{redis.process.pid}/task"):
        with open(f"/proc/{redis.process.pid}/task/{task}/comm") as f:
            names.append(f.read().strip())
    check(names.count("heapkit-worker") == 1, f"the agent's threads in idle redis: {names}")
    # The agent's threads keep no thread cache (Profiler::make_thread_a_guest): what they
    # free goes back to the arena, which purges it at rest; with caches, the three server
    # threads held about 0.9 MB of the pages they had served with (BENCHMARKS.md).
    if cached is not None:
        grown = min(tcache_bytes() for _ in range(3)) - cached
        print(f"thread caches: {grown:+} bytes after serving")
        # With caches, the agent's threads left +1.87 MB here; redis alone moves ~110 kB.
        check(grown <= 256 * 1024, f"serving left {grown} more bytes in thread caches")
finally:
    redis.stop()
