# SPDX-License-Identifier: MIT
"""The exact fragmentation profile (HEAPKIT_FRAGMENTATION) under libheapkit-agent.so, with
libheapkit-fragmentation.so's malloc interposers preloaded beside it (the profile's comments
say so: not jemalloc's hooks).

tests/fixtures/frag_stacks.c, held alive once it has fragmented its own arena, computes
per stack the truth from its pointers (experimental.utilization.query, tcmalloc's rule)
and the variance of the sampler's estimate of it (each live object's charge c kept with
probability p = 1 - exp(-size / mean): sum of c^2 (1 - p) / p). /debug/pprof/fragmentation
must be within 4 standard deviations of the truth per stack (about 1 run in 16000 fails by
chance), labelled with the fixture's arena; go tool pprof -top and heapfold --text read it.
The fixture's alloc_gone objects, all freed through one entry point or another (some moved
first by regrow_gone's realloc or rallocx), leave no sample behind. Then Debian's
redis-server, keys of mixed sizes set and most deleted: the profile names redis' own
allocating functions as holders of slabs."""

import json
import math
import os
import shutil
import sys
import time

from agent_e2e import AGENT_SO, FRAGMENTATION_SO, Guest, fetch, http
from heapkit_e2e import (check, fixture, go_pprof, parse_folded, pprof_raw, pprof_total, run,
                         tool, workdir)

directory = workdir()
LG_SAMPLE = 8  # one sample per 256 bytes: alloc_b's 1024 live objects give ~320 samples
MEAN = 1 << LG_SAMPLE
STACKS = ("alloc_a", "alloc_b", "alloc_c")

# --- the fixture: the profile against its truth ------------------------------------------
PRELOAD = [AGENT_SO, FRAGMENTATION_SO]
INTERPOSED = "kept by libheapkit-fragmentation.so's malloc interposers"
guest = Guest([fixture("frag_stacks"), directory, str(MEAN)], preload=PRELOAD, stdin=True,
              env={"MALLOC_CONF": "prof:true", "HEAPKIT_START_DELAY_MS": "0",
                   "HEAPKIT_FRAGMENTATION": f"lg_sample:{LG_SAMPLE}"})
try:
    url = guest.url()
    guest.wait_for(r"fragmentation sampling on: one allocation per 256 bytes.*" + INTERPOSED)
    guest.process.stdin.write("go\n")
    guest.process.stdin.flush()
    truth_path = os.path.join(directory, "truth.json")
    for _ in range(300):  # up to 30 s
        if os.path.exists(truth_path) and open(truth_path).read().endswith("}\n"):
            break
        check(guest.process.poll() is None, f"frag_stacks ended: {guest.lines[-5:]}")
        time.sleep(0.1)
    with open(truth_path) as f:
        truth = json.load(f)
    pprof = fetch(url, "/debug/pprof/fragmentation", os.path.join(directory, "exact.pb.gz"))
    # The flame graph jestat's page links to, and the link.
    status, head, svg = http(url + "/debug/pprof/fragmentation?format=svg&width=900")
    _, _, stats_page = http(url + "/debug/jemalloc/stats?format=html")
    bad_format, _, _ = http(url + "/debug/pprof/fragmentation?format=png")
finally:
    guest.stop()

svg = svg.decode()
check(status == 200 and head.get("Content-Type") == "image/svg+xml" and
      svg.lstrip().startswith("<?xml") and "Fragmentation" in svg and
      all(name in svg for name in STACKS), f"format=svg: {status} {head} {svg[:300]}")
check(b'href="/debug/pprof/fragmentation?format=svg"' in stats_page,
      f"/debug/jemalloc/stats?format=html has no link to the stacks: {stats_page[:2000]!r}")
check(bad_format == 400, f"format=png: {bad_format}")

types, samples, _ = pprof_raw(pprof)
check(types == ["fragmentation_objects", "fragmentation_space", "inuse_objects", "inuse_space"],
      f"sample types: {types}")
print("stack     truth (tcmalloc's rule)  exact mode   error   4 sd")
for name in STACKS:
    ours = pprof_total(samples, "fragmentation_space", lambda f: name in f)
    bound = 4 * math.sqrt(truth["variance"][name]) + 1
    print(f"{name}  {truth[name]:>14.0f} B  {ours:>10} B  {(ours - truth[name]) / truth[name]:+.1%}"
          f"  {bound / truth[name]:.1%}")
    check(abs(ours - truth[name]) <= bound,
          f"{name}: {ours} bytes charged, the truth is {truth[name]:.0f} (4 sd: {bound:.0f})")
arena = f"arena {truth['arena']}"
labels = {s["labels"].get("bin") for s in samples if any(n in s["frames"] for n in STACKS)}
check(labels == {f"96 B, {arena}", f"224 B, {arena}"} or
      labels == {f'"96 B, {arena}"', f'"224 B, {arena}"'}, f"bin labels: {labels}")
# No stale sample: a freed object's would be charged to alloc_gone; the moved ones that
# were kept are regrow_gone's.
gone = [s["by_type"] for s in samples if "alloc_gone" in s["frames"]]
check(not gone, f"freed objects still in the sample: {gone}")
regrown = pprof_total(samples, "inuse_objects", lambda f: "regrow_gone" in f)
check(regrown > 0, "the objects regrow_gone moved and kept are not in the sample")
top = go_pprof("-top", pprof).stdout
check(INTERPOSED in go_pprof("-comments", pprof).stdout, "the comments name no interposers")
check("Type: fragmentation_space" in top and "alloc_a" in top, f"go tool pprof -top:\n{top}")
# heapfold's views read it, as exact (the offline estimate's views say "estimate").
text = run([tool("heapfold"), "-q", "--text", pprof]).stdout
check(text.startswith("fragmentation_space: ") and "estimate" not in text.splitlines()[0] and
      "alloc_b" in text, f"heapfold --text:\n{text[:500]}")

# --- redis: keys of mixed sizes set, most deleted ------------------------------------------
server = shutil.which("redis-server")
client = shutil.which("redis-cli")
if not (server and client):
    print("redis-server or redis-cli not installed: the redis part is skipped")
    print("ok")
    sys.exit(0)
socket = os.path.join(directory, "redis.sock")


def cli(*args):
    return run([client, "-s", socket, *args]).stdout.strip()


redis = Guest([server, "--port", "0", "--unixsocket", socket, "--dir", directory,
               "--save", "", "--appendonly", "no", "--daemonize", "no",
               "--enable-debug-command", "local", "--logfile", os.path.join(directory, "log")],
              preload=PRELOAD, env={"MALLOC_CONF": "prof:true,lg_prof_sample:12",
                                       "HEAPKIT_START_DELAY_MS": "0",
                                       "HEAPKIT_FRAGMENTATION": "lg_sample:12"})
try:
    url = redis.url()
    redis.wait_for(r"fragmentation sampling on.*" + INTERPOSED)
    for _ in range(50):  # up to about 10 s for the socket
        if os.path.exists(socket) and cli("PING") == "PONG":
            break
        time.sleep(0.2)
    for prefix, size in (("a", 24), ("b", 90), ("c", 200)):
        check(cli("DEBUG", "POPULATE", "50000", prefix, str(size)) == "OK", "DEBUG POPULATE")
    # All but every 10th key deleted: their slabs stay, pinned by the keys left.
    script = ("for _, p in ipairs({'a', 'b', 'c'}) do for i = 0, 49999 do "
              "if i % 10 ~= 0 then redis.call('DEL', p .. ':' .. i) end end end")
    cli("EVAL", script, "0")
    pprof = fetch(url, "/debug/pprof/fragmentation", os.path.join(directory, "redis.pb.gz"))
    # The offline estimate of the same moment: jemalloc's statistics as redis prints them
    # and its raw dump (jeprof's route).
    stats_text = os.path.join(directory, "redis-stats.txt")
    with open(stats_text, "w") as f:
        f.write(run([client, "-s", socket, "MEMORY", "MALLOC-STATS"]).stdout)
    dump = fetch(url, "/pprof/heap", os.path.join(directory, "redis.heap"))
finally:
    redis.stop()
types, samples, _ = pprof_raw(pprof)
held = pprof_total(samples, "fragmentation_space", lambda f: "debugCommand" in f)
total = pprof_total(samples, "fragmentation_space", lambda f: True)
named = {name for s in samples if s["by_type"]["fragmentation_space"] > 0 for name in s["frames"]
         if name in ("zmalloc", "ztrymalloc_usable", "sdsnewlen", "_sdsnewlen", "createObject",
                     "createStringObject", "dictAddRaw", "dictAdd")}
print(f"redis: {total} bytes of partly used slabs charged, {held} under debugCommand; {named}")
check(held > 0.5 * total > 0, f"debugCommand's keys hold {held} of {total} charged bytes")
check(named, "no redis allocating function is charged")


def slab_free_bytes(text):
    """Free bytes of partly used slabs in malloc_stats_print's text: every bin row's
    curslabs x pgs pages - curregs x size, of the merged arenas when printed, else summed
    over the arenas."""
    sections, current = {}, None
    for line in text.splitlines():
        if line.startswith(("Merged arenas stats:", "arenas[")):
            current = sections.setdefault(line.split(":")[0], [])
        elif current is not None:
            current.append(line)
    chosen = [v for k, v in sections.items() if k == "Merged arenas stats"] or \
        [v for k, v in sections.items() if k.startswith("arenas[")]
    total = 0
    for lines in chosen:
        header = None
        for line in lines:
            words = line.split()
            if words[:1] == ["bins:"]:
                header = words[1:]
            elif header and len(words) == len(header) and words[0].isdigit():
                row = dict(zip(header, words))
                total += (int(row["curslabs"]) * int(row["pgs"]) * 4096 -
                          int(row["curregs"]) * int(row["size"]))
            elif header and not words:
                header = None
    return total


estimate = parse_folded(run([tool("heapfold"), "-q", "--stats", stats_text, dump]).stdout)
truth_total = slab_free_bytes(open(stats_text).read())
estimated_total = sum(estimate.values())
estimated_held = sum(v for k, v in estimate.items() if "debugCommand" in k)
unattributed = sum(v for k, v in estimate.items() if k.startswith("[unattributed: bin "))
# Reported beside the exact mode's, not asserted: the keys' values of 90 and 200 bytes come
# from one call site, whose objects' average falls in a class between theirs, so the
# estimate leaves their classes unattributed (heapfold(1), FRAGMENTATION, says so).
print(f"redis, the offline estimate: {estimated_total} bytes charged (the statistics' slabs: "
      f"{truth_total}), {estimated_held / estimated_total:.0%} under debugCommand (exact mode: "
      f"{held / total:.0%}), {unattributed / estimated_total:.0%} unattributed")
check(estimated_total == truth_total > 0,
      f"the estimate charges {estimated_total}, the statistics' slabs hold {truth_total}")
check(estimated_held > 0, "the estimate charges nothing under debugCommand: "
      f"{sorted(estimate.items(), key=lambda kv: -kv[1])[:5]}")
print("ok")
