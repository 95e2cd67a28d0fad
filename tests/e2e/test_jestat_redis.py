# SPDX-License-Identifier: MIT
"""jestat on a real redis-server (Debian's, on the system jemalloc): MEMORY MALLOC-STATS, the
text format redis users have, read in the same pipelined request as INFO memory, so both are
answered in one pass of redis' event loop. The report's allocated, active and resident bytes
agree with redis' own allocator_allocated, allocator_active and allocator_resident. Skipped
(77) without redis-server. Reached through a Unix socket only."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time

from heapkit_e2e import check, run, tool, workdir, write_file

server = shutil.which("redis-server")
if server is None:
    print("redis-server not installed (Debian: redis-server): skipping")
    sys.exit(77)

directory = workdir()
path = os.path.join(directory, "redis.sock")


def command(*args):
    """One command in RESP, redis' wire format."""
    out = f"*{len(args)}\r\n".encode()
    for arg in args:
        out += f"${len(arg)}\r\n{arg}\r\n".encode()
    return out


def reply(stream):
    line = stream.readline()
    kind, rest = line[:1], line[1:-2].decode()
    if kind == b"$":
        return stream.read(int(rest) + 2)[:-2].decode()
    if kind == b"-":
        return "error: " + rest
    check(kind in (b"+", b":"), f"redis answered {line!r}")
    return rest


def ask(*commands):
    """Sends the commands in one write and returns their replies."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(10)
        conn.connect(path)
        conn.sendall(b"".join(command(*c) for c in commands))
        stream = conn.makefile("rb")
        return [reply(stream) for _ in commands]


def allocator(info):
    return {k: int(v) for k, v in (line.split(":", 1) for line in info.splitlines()
                                   if line.startswith("allocator_") and ":" in line)
            if v.isdigit()}


env = dict(os.environ)
env.pop("LD_PRELOAD", None)
env.pop("MALLOC_CONF", None)
redis = subprocess.Popen([server, "--port", "0", "--unixsocket", path, "--dir", directory,
                          "--save", "", "--appendonly", "no", "--daemonize", "no",
                          "--enable-debug-command", "local", "--logfile",
                          os.path.join(directory, "redis.log")], env=env)
try:
    for _ in range(50):  # up to about 10 s to come up
        try:
            if ask(("PING",)) == ["PONG"]:
                break
        except OSError:
            pass
        check(redis.poll() is None, f"redis-server exited with {redis.returncode}")
        time.sleep(0.2)
    else:
        check(False, "redis-server did not answer PING within 10 s")
    # 200000 keys, then a quarter deleted at random: partly used slabs.
    check(ask(("DEBUG", "POPULATE", "200000", "key", "100")) == ["OK"], "DEBUG POPULATE failed")
    ask(*[("DEL", *[f"key:{i}" for i in range(j, j + 1000, 4)]) for j in range(0, 200000, 1000)])
    # INFO's allocator figures are redis' copy from its last cron tick (every 100 ms): a
    # tick during the deletes holds their buffers. The request is repeated, 150 ms apart,
    # until INFO answers the same before and after MALLOC-STATS and as the time before (a
    # tick came between them: the copy is of the quiet server).
    previous = None
    for attempt in range(20):
        time.sleep(0.15)
        before, stats, after = ask(("INFO", "memory"), ("MEMORY", "MALLOC-STATS"),
                                   ("INFO", "memory"))
        if allocator(before) == allocator(after) == previous:
            break
        previous = allocator(after)
    else:
        check(False, "INFO memory never settled around MEMORY MALLOC-STATS in 3 s")
    smaps = open(f"/proc/{redis.pid}/smaps").read()
    # What jestat's advice says of Debian's redis: it cannot defragment.
    defrag = ask(("CONFIG", "SET", "activedefrag", "yes"))[0]
finally:
    if redis.poll() is None:
        redis.terminate()
    try:
        redis.wait(timeout=10)
    except subprocess.TimeoutExpired:
        redis.kill()
        redis.wait(timeout=10)

stats_path = write_file(directory, "malloc-stats.txt", stats)
smaps_path = write_file(directory, "smaps", smaps)
report = json.loads(run([tool("jestat"), stats_path, "--smaps", smaps_path, "--json"]).stdout)
theirs = allocator(before)
ours = report["jemalloc"]
check(ours["format"] == "text", f"read as {ours['format']}")
# MALLOC-STATS builds its reply in a 64 KiB buffer before jemalloc prints: that much more is
# allocated (and active, with its page) at the moment of the print.
for name in ("allocated", "active", "resident"):
    gap = ours[name] - theirs[f"allocator_{name}"]
    print(f"{name}: jestat {ours[name]}, INFO memory {theirs['allocator_' + name]} ({gap:+})")
    check(0 <= gap <= 128 * 1024, f"{name}: jestat {ours[name]}, redis "
          f"{theirs['allocator_' + name]}")
rows = {row["key"]: row["bytes"] for row in report["allocator"]}
check(rows["slab_waste"] > 0 and report["worst_bins"], "no partly used slabs after the deletes")
check(rows["allocated"] == ours["allocated"] and rows["resident"] == ours["resident"],
      "the waterfall's subtotals are not jemalloc's")
# Advice for redis names redis's own commands, restart last; the activedefrag refusal it
# reports is this redis's own answer.
print(f"CONFIG SET activedefrag yes: {defrag}")
knobs = {row["key"]: row["knob"] for row in report["allocator"]}
if defrag.startswith("error"):
    check("Debian's cannot defragment" in knobs["slab_waste"], knobs["slab_waste"])
check(knobs["slab_waste"].index("activedefrag") < knobs["slab_waste"].index("restart"),
      knobs["slab_waste"])
check(rows["dirty"] == 0 or "MEMORY PURGE" in knobs["dirty"], knobs["dirty"])
# The same text inside a log (a redis-cli session pasted with its prompt lines).
logged = write_file(directory, "logged.txt", "127.0.0.1:6379> MEMORY MALLOC-STATS\n" + stats +
                    "127.0.0.1:6379> quit\n")
proc = run([tool("jestat"), logged, "--smaps", smaps_path, "--json"])
check(json.loads(proc.stdout)["allocator"] == report["allocator"], "the logged text differs")
check("skipped 1 line before the statistics and 1 after" in proc.stderr, proc.stderr)
text = run([tool("jestat"), stats_path]).stdout
check("partly used slabs" in text and "Worst size classes" in text, text)
print("jestat on redis: allocator figures agree with INFO memory")
