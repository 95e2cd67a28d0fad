# SPDX-License-Identifier: MIT
"""Debian's redis-server, which links the system jemalloc, profiled as the README says:
MALLOC_CONF, a dump taken with `redis-cli DEBUG MALLCTL-STR prof.dump`, both tools on it.
Names come from redis' .dynsym (Debian strips its DWARF); the executable appears as
redis-check-rdb, the file Debian's redis-server symlink points to; jeprof's totals agree.
Skipped (77) without redis-server and redis-cli. Reached through a Unix socket only."""

import os
import re
import shutil
import subprocess
import sys
import time

from heapkit_e2e import check, heapfold, pprof_raw, pprof_total, run, tool, workdir

server = shutil.which("redis-server")
client = shutil.which("redis-cli")
if server is None or client is None:
    print("redis-server or redis-cli not installed (Debian: redis-server, redis-tools): skipping")
    sys.exit(77)

directory = workdir()
socket = os.path.join(directory, "redis.sock")
dump = os.path.join(directory, "redis.heap")


def cli(*args):
    return run([client, "-s", socket, *args]).stdout.strip()


# No TCP port (port 0), no persistence; DEBUG allowed from local connections only.
env = dict(os.environ, MALLOC_CONF="prof:true,lg_prof_sample:0")
env.pop("LD_PRELOAD", None)
redis = subprocess.Popen([server, "--port", "0", "--unixsocket", socket, "--dir", directory,
                          "--save", "", "--appendonly", "no", "--daemonize", "no",
                          "--enable-debug-command", "local", "--logfile",
                          os.path.join(directory, "redis.log")], env=env)
try:
    for _ in range(50):  # up to about 10 s to come up
        if os.path.exists(socket) and subprocess.run(
                [client, "-s", socket, "PING"], capture_output=True, text=True,
                timeout=5).stdout.strip() == "PONG":
            break
        check(redis.poll() is None, f"redis-server exited with {redis.returncode}")
        time.sleep(0.2)
    else:
        check(False, "redis-server did not answer PING within 10 s")
    check(cli("DEBUG", "POPULATE", "5000", "key", "256") == "OK", "DEBUG POPULATE failed")
    answer = cli("DEBUG", "MALLCTL-STR", "prof.dump", dump)
    check(answer == "OK" and os.path.exists(dump), f"prof.dump answered {answer!r}")
finally:
    if redis.poll() is None:
        subprocess.run([client, "-s", socket, "SHUTDOWN", "NOSAVE"], capture_output=True,
                       timeout=10)
    try:
        redis.wait(timeout=10)
    except subprocess.TimeoutExpired:
        redis.kill()
        redis.wait(timeout=10)

with open(dump) as f:
    maps = f.read().split("MAPPED_LIBRARIES:")[1]
check("/usr/bin/redis-check-rdb" in maps, "the executable is not mapped as redis-check-rdb")
check("libjemalloc.so.2" in maps, "redis-server is not on the system jemalloc")

# Names from .dynsym: DEBUG POPULATE's keys go through redis' dict and zmalloc code.
stacks = heapfold(dump)
populate = {s: v for s, v in stacks.items() if "debugCommand" in s.split(";")}
check(any(f in s.split(";") for s in populate for f in ("dictAddRaw", "dictAdd", "dbAdd")),
      f"no dict function under debugCommand: {sorted(populate)[:10]}")
# redis' zmalloc family is on the allocator list: cut, so that its callers are the leaves;
# --keep-allocator-frames keeps it.
ZMALLOC = re.compile(r"^z(try)?(malloc|calloc|realloc|strdup)")
left = {f for s in stacks for f in s.split(";") if ZMALLOC.match(f)}
check(not left, f"zmalloc frames are left: {left}")
kept = heapfold("--keep-allocator-frames", dump)
check(any(ZMALLOC.match(f) for s in kept if "debugCommand" in s.split(";") for f in s.split(";")),
      f"--keep-allocator-frames lost zmalloc: {sorted(kept)[:10]}")
check(sum(populate.values()) > 5000 * 256, f"DEBUG POPULATE holds {sum(populate.values())} bytes")

# jeprof, the reference reader, on the same dump: totals agree (it truncates each stack's
# value, heapkit rounds: one unit per line apart at most).
jeprof = run(["jeprof", "--collapsed", "--inuse_space", server, dump]).stdout
theirs = sum(int(line.rpartition(" ")[2]) for line in jeprof.splitlines())
ours = sum(stacks.values())
slack = len(stacks) + len(jeprof.splitlines())
check(abs(ours - theirs) <= slack, f"heapfold total {ours}, jeprof {theirs}")

out = os.path.join(directory, "redis.pb.gz")
run([tool("jeprof2pprof"), dump, "-o", out])
_, samples, mappings = pprof_raw(out)
check(any("/usr/bin/redis-check-rdb" in m for m in mappings), f"mappings: {mappings}")
pprof_populate = pprof_total(samples, "inuse_space", lambda f: "debugCommand" in f)
check(pprof_populate == sum(populate.values()),
      f"pprof has {pprof_populate} bytes under debugCommand, heapfold {sum(populate.values())}")
print("ok")
