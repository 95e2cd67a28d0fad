# SPDX-License-Identifier: MIT
"""jemalloc's allocation log (prof_log) read with a dump of the same process: the churn
fixture's three sites (freed at once, living 50 ms, freed by another thread) measured by
heapfold's folded and --text views and jeprof2pprof's pprof, against a computation over
the JSON log here and the fixture's known behaviour; bad logs get messages."""

import glob
import json
import math
import os
import re
import shutil
from collections import defaultdict

from heapkit_e2e import (SVG, check, chromium, fixture, go_pprof, heapfold, png_colours,
                         pprof_raw, run, tool, workdir, write_file)

LOG_CONF = "prof:true,prof_log:true,prof_time_resolution:high,lg_prof_sample:0,prof_final:true"


def run_churn(directory, *args, logs_made=1):
    """Runs the fixture; returns its (last) allocation log and its final dump."""
    env = dict(os.environ)
    env["MALLOC_CONF"] = f"{LOG_CONF},prof_prefix:{directory}/jeprof"
    env.pop("LD_PRELOAD", None)
    before = set(glob.glob(f"{directory}/jeprof.*"))
    run([fixture("churn"), *args], env=env)
    made = set(glob.glob(f"{directory}/jeprof.*")) - before
    logs = sorted(p for p in made if p.endswith(".json"))
    dumps = [p for p in made if p.endswith(".f.heap")]
    check(len(logs) == logs_made and len(dumps) == 1, f"churn left {sorted(made)}")
    return logs[-1], dumps[0]


directory = workdir()
log_path, dump_path = run_churn(directory)

# --- the independent computation over the JSON -----------------------------------------
with open(log_path) as f:
    log = json.load(f)
period = 2 ** log["info"]["lg_sample_rate"]
seconds = log["info"]["duration"] / 1e9
uids = [t["thr_uid"] for t in log["threads"]]


TYPES = ["alloc_objects", "alloc_space", "temporary_objects", "temporary_space", "byte_seconds",
         "cross_thread_objects", "cross_thread_space"]


def weight(usize):
    return 1 / (1 - math.exp(-usize / period))


def rounded(x):
    return math.floor(x + 0.5)


# The fixture's sites, told apart by what they allocate (count and size), not by name.
by_trace = defaultdict(list)
for a in log["allocations"]:
    by_trace[a["alloc_trace"]].append(a)
sites = {}
for trace, allocations in by_trace.items():
    sizes = {a["usize"] for a in allocations}
    for name, count, size in (("temporary_site", 2000, 256), ("lived_alloc", 200, 1024),
                              ("cross_site", 500, 512)):
        if sizes == {size} and len(allocations) == count:
            check(name not in sites, f"two traces look like {name}")
            sites[name] = allocations
check(set(sites) == {"temporary_site", "lived_alloc", "cross_site"},
      f"the log's traces: {[(t, len(a)) for t, a in by_trace.items()]}")


def measures(allocations):
    m = defaultdict(float)
    lifetimes = []
    for a in allocations:
        w = weight(a["usize"])
        life = max(0, a["free_timestamp"] - a["alloc_timestamp"])
        lifetimes.append(life)
        m["alloc_objects"] += w
        m["alloc_space"] += w * a["usize"]
        if life <= 1_000_000:
            m["temporary_objects"] += w
            m["temporary_space"] += w * a["usize"]
        m["byte_seconds"] += w * a["usize"] * life / 1e9
        if uids[a["alloc_thread"]] != uids[a["free_thread"]]:
            m["cross_thread_objects"] += w
            m["cross_thread_space"] += w * a["usize"]
    return {k: rounded(m[k]) for k in TYPES}, sorted(lifetimes)


truth = {name: measures(allocations) for name, allocations in sites.items()}

# The fixture's own behaviour, seen in the log.
temporary, lived, cross = (truth[n][1] for n in ("temporary_site", "lived_alloc", "cross_site"))
# Freed at once: far under lived_alloc's 50 ms, with room for a preemption on a loaded
# machine (4 ms seen with two builds beside the suite).
check(temporary[-1] <= 20_000_000, f"temporary_site's longest lifetime {temporary[-1]} ns")
check(40e6 <= lived[len(lived) // 2] <= 60e6, f"lived_alloc's median lifetime {lived[len(lived) // 2]} ns")
check(truth["cross_site"][0]["cross_thread_objects"] == 500, "cross_site's frees by freer")
check(truth["temporary_site"][0]["cross_thread_objects"] == 0, "temporary_site freed at home")

# --- folded: every type, per site ------------------------------------------------------
for sample in TYPES:
    stacks = heapfold("--sample", sample, log_path, dump_path)
    for name, (want, _) in truth.items():
        got = sum(v for s, v in stacks.items() if s.split(";")[-1] == name)
        check(got == want[sample], f"--sample {sample}: {name} {got}, the log says {want[sample]}")

ranked = heapfold("--sample", "byte_seconds", log_path, dump_path)
top = max(ranked, key=ranked.get).split(";")[-1]
check(top == "lived_alloc", f"byte_seconds ranks {top} first")
default = heapfold(log_path, dump_path)
check(sum(v for s, v in default.items() if s.endswith(";temporary_site")) ==
      truth["temporary_site"][0]["alloc_space"], "a log's default sample is alloc_space")

# The picture says what it adds up: the sample type in its title (it said "Flame Graph:
# N bytes in all" for every type).
svg = run([tool("heapfold"), "--svg", "--sample", "temporary_space", log_path, dump_path]).stdout
check("Flame Graph of temporary_space: " in svg, f"the title lacks the sample type: {svg[:600]!r}")

# --- freeing sites ---------------------------------------------------------------------
freed = heapfold("--free-sites", "--threads", "--sample", "cross_thread_objects", log_path, dump_path)
freer = sum(v for s, v in freed.items() if s.startswith("freer;"))
check(freer == 500, f"cross-thread frees under the freer thread: {freer} ({freed})")

# The table with --threads: a row per thread and site, the thread's name first (as the
# folded stacks spell it); the freer thread's frees are the cross-thread ones.
text = run([tool("heapfold"), "--text", "--free-sites", "--threads", "--sample",
            "cross_thread_objects", log_path, dump_path]).stdout
rows = {line.split()[-1]: line.split() for line in text.splitlines()[2:]}
# (500 cross-thread frees and the thread's own object: 500 of 501.)
check(rows.get("freer;freer") and float(rows["freer;freer"][10].rstrip("%")) >= 99.5 and
      all(float(r[10].rstrip("%")) == 0 for k, r in rows.items() if k != "freer;freer"),
      f"--text --threads has no freer;freer row of cross-thread frees:\n{text}")
plain = run([tool("heapfold"), "--text", "--free-sites", log_path, dump_path]).stdout
check(not any(";" in line.split()[-1] for line in plain.splitlines()[2:]),
      f"thread names without --threads:\n{plain}")

# --- pprof, as go tool pprof reads it --------------------------------------------------
out = os.path.join(directory, "log.pb.gz")
run([tool("jeprof2pprof"), log_path, dump_path, "-o", out])
types, samples, _ = pprof_raw(out)
check(types == TYPES, f"pprof sample types {types}")
for name, (want, _) in truth.items():
    for sample in TYPES:
        got = sum(s["by_type"][sample] for s in samples if name in s["frames"][:1])
        check(got == want[sample], f"pprof {sample}: {name} {got}, the log says {want[sample]}")
top = go_pprof("-top", "-sample_index=cross_thread_objects", "-symbolize=none", out).stdout
first = next(line.split()[-1] for line in top.splitlines() if re.match(r"^\s+\d", line))
check(first == "cross_site", f"go tool pprof -sample_index=cross_thread_objects ranks {first} first:\n{top}")

# --- the table -------------------------------------------------------------------------
text = run([tool("heapfold"), "--text", log_path, dump_path]).stdout
header, columns, *rows = text.splitlines()
check(columns.split() == ["allocs/s", "bytes/s", "life_p50", "life_p90", "life_p99", "life_max",
                          "<=1ms", "<=10ms", "<=1s", "byte_secs", "xthr", "site"], columns)
table = {r.split()[-1]: r.split() for r in rows}
check([r.split()[-1] for r in rows][0] == "temporary_site", f"alloc_space ranks first:\n{text}")


def nanos(cell):
    number, unit = re.match(r"^([\d.]+)(ns|us|ms|s)$", cell).groups()
    return float(number) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]


for name, (want, lifetimes) in truth.items():
    row = table[name]
    allocs_per_second = want["alloc_objects"] / seconds
    check(abs(float(row[0]) - allocs_per_second) <= 0.05 * allocs_per_second + 0.1,
          f"{name} allocs/s {row[0]}, the log says {allocs_per_second:.1f}")
    for cell, q in ((row[2], 0.5), (row[3], 0.9), (row[4], 0.99)):
        exact = lifetimes[max(0, math.ceil(q * len(lifetimes)) - 1)]
        check(abs(nanos(cell) - exact) <= 0.06 * exact + 1, f"{name} p{int(q * 100)} {cell}, the log says {exact} ns")
    check(abs(nanos(row[5]) - lifetimes[-1]) <= 0.06 * lifetimes[-1] + 1, f"{name} max {row[5]}")
    for cell, limit in ((row[6], 1e6), (row[7], 1e7), (row[8], 1e9)):
        share = 100 * sum(1 for x in lifetimes if x <= limit) / len(lifetimes)
        check(abs(float(cell.rstrip("%")) - share) <= 0.1, f"{name} share within {limit:.0f} ns {cell}, the log says {share:.1f}%")
    check(int(row[9].replace(",", "")) == want["byte_seconds"], f"{name} byte_secs {row[9]}")
    xthr = 100 * want["cross_thread_objects"] / want["alloc_objects"]
    check(abs(float(row[10].rstrip("%")) - xthr) <= 0.1, f"{name} xthr {row[10]}")
check("per allocating site by alloc_space" in header, header)

# --- the lifetime chart: each site's bars are the log's lifetimes, bucketed here -----------
def bucket(nanos):
    """Four log-scale buckets a decade from 100 ns to 100 s, a column of its own for what
    lived shorter (0) and for what lived longer (37)."""
    return 0 if nanos < 100 else min(37, 1 + math.floor((math.log10(nanos) - 2) * 4))


chart = os.path.join(directory, "lifetimes.svg")
run([tool("heapfold"), "--lifetimes", log_path, dump_path, "-o", chart])
import xml.etree.ElementTree as ET  # noqa: E402

bars = defaultdict(dict)  # site -> {bar start text: count}
for rect in ET.parse(chart).getroot().iter(f"{SVG}rect"):
    title = rect.find(f"{SVG}title")
    if title is None:
        continue
    match = re.match(r"^(.*): ([\d,]+) objects lived (\S+ to \S+|under 100ns|100s or more) ",
                     title.text)
    check(match, f"bar title {title.text!r}")
    bars[match.group(1)][match.group(3)] = int(match.group(2).replace(",", ""))
for name, (_, lifetimes) in truth.items():
    counts = defaultdict(int)
    for life in lifetimes:
        counts[bucket(life)] += 1
    check(sorted(bars[name].values()) == sorted(counts.values()),
          f"{name}'s bars {bars[name]}, the log's buckets {dict(counts)}")
# Each row's objects and tallest bar under its name, as the log counts them.
chart_text = open(chart).read()
for name, (_, lifetimes) in truth.items():
    counts = defaultdict(int)
    for life in lifetimes:
        counts[bucket(life)] += 1
    check(f"{len(lifetimes):,} objects, tallest bar {max(counts.values()):,}</text>" in chart_text,
          f"{name}: no count of {len(lifetimes)} objects under its name")
check("\u2265100s</text>" in chart_text and "&lt;100ns</text>" in chart_text,
      "the open-ended columns are not labelled")
lived_bar = max(bars["lived_alloc"], key=bars["lived_alloc"].get).split(" to ")[0]
check(lived_bar.endswith("ms") and 17 <= float(lived_bar[:-2]) <= 60, f"lived_alloc's tallest bar starts at {lived_bar}")
check("lifetime, from allocation to free (logarithmic" in chart_text, "the axis has no title")
png = os.path.join(directory, "lifetimes.png")
chromium(f"--screenshot={png}", "--window-size=1200,420", f"file://{chart}")
if os.environ.get("LIFETIMES_KEEP_SHOT"):
    shutil.copy(png, os.environ["LIFETIMES_KEEP_SHOT"])
_, _, colours = png_colours(png)
orange = sum(n for (r, g, b), n in colours.items() if abs(r - 0xd9) < 8 and abs(g - 0x82) < 8 and abs(b - 0x2b) < 8)
check(orange > 500, f"the sites' bars cover {orange} pixels of the screenshot")

# --- objects allocated before the log began ------------------------------------------------
# churn restart: early_site's 100 objects allocated, the log restarted 100 ms later, then
# freed: the new log records them with lifetimes that began before it. They are left out
# of every figure (they made allocs/s and lifetimes of objects not born in the log), and
# the text, the chart and the pprof say how many.
restarted_directory = workdir()
restarted, restarted_dump = run_churn(restarted_directory, "restart", logs_made=2)
check(restarted.endswith(".1.json"), f"the restarted log: {restarted}")
with open(restarted) as f:
    second = json.load(f)
last_free = max(a["free_timestamp"] for a in second["allocations"])
start = last_free - second["info"]["duration"]
early = [a for a in second["allocations"] if a["alloc_timestamp"] < start]
early_sizes = {a["usize"] for a in early}
check(len(early) >= 100 and 2048 in early_sizes, f"the log's early records: {len(early)}")
note = (f"{len(early)} of the log's {len(second['allocations'])} records are of objects "
        "allocated before it began")
text = run([tool("heapfold"), "--text", restarted, restarted_dump]).stdout
check(f"note: {note}" in text and "early_site" not in text, f"the early objects:\n{text}")
for line in text.splitlines()[2:]:
    if not line.startswith("note: "):
        check(nanos(line.split()[5]) <= second["info"]["duration"], f"a lifetime past the log: {line}")
in_log = [a for a in second["allocations"] if a["alloc_timestamp"] >= start]
folded = heapfold("--sample", "alloc_objects", restarted, restarted_dump)
check(abs(sum(folded.values()) - rounded(sum(weight(a["usize"]) for a in in_log if a["usize"]))) <= 2,
      f"alloc_objects {sum(folded.values())}, the log's own objects {len(in_log)}")
chart = os.path.join(directory, "restarted.svg")
run([tool("heapfold"), "--lifetimes", restarted, restarted_dump, "-o", chart])
with open(chart) as f:
    check(note in f.read(), "the lifetimes chart does not say what was left out")
pb = os.path.join(directory, "restarted.pb.gz")
run([tool("jeprof2pprof"), restarted, restarted_dump, "-o", pb])
check(note in go_pprof("-raw", "-symbolize=none", pb).stdout, "the pprof's comments lack the note")

# --- bad logs --------------------------------------------------------------------------
def refused(args, *parts):
    proc = run([tool("heapfold"), *args], check=False)
    check(proc.returncode == 1 and proc.stdout == "", f"{args}: exit {proc.returncode}, {proc.stdout!r}")
    for part in parts:
        check(part in proc.stderr, f"{args}: {part!r} not in {proc.stderr!r}")


with open(log_path, "rb") as f:
    whole = f.read()
pid = log["info"]["pid"]
cut = write_file(directory, f"cut.{pid}.0.json", whole[: len(whole) // 2])
refused([cut, dump_path], cut, "ends early")
other_directory = workdir()
_, other_dump = run_churn(other_directory)
refused([log_path, other_dump], log_path, other_dump, f"pid {pid}")
# The other process's dump named by hand in jemalloc's manner, without the kind (as
# prof.dump is often given a name): its pid is read, and refused (it was taken unchecked,
# "its name carries no pid", and the log collapsed into one unnamed site).
other_pid = int(os.path.basename(other_dump).split(".")[1])
hand_named = os.path.join(other_directory, f"jeprof.{other_pid}.100.heap")
shutil.copy(other_dump, hand_named)
refused([log_path, hand_named], log_path, hand_named, f"pid {pid}", f"pid {other_pid}")


def code_start(dump):
    with open(dump) as f:
        return next(line.split("-")[0] for line in f
                    if " r-xp " in line and line.rstrip().endswith("/churn"))


# Named freely, with no pid at all: the log's addresses tell, most lying in no code mapping
# of another process's dump (ASLR places a run's code elsewhere).
free_named = os.path.join(other_directory, "redis.heap")
shutil.copy(other_dump, free_named)
if code_start(other_dump) == code_start(dump_path):
    print("skipping the check of a freely named dump of another process: both runs loaded "
          "churn at one address (ASLR is off)")
else:
    refused([log_path, free_named], log_path, free_named, "lie in no code mapping",
            f"pid {pid}")
# The log's own dump named freely: used, with a warning that its name does not tell the pid.
mine = os.path.join(directory, "mine.heap")
shutil.copy(dump_path, mine)
proc = run([tool("heapfold"), "--text", log_path, mine], check=False)
check(proc.returncode == 0 and f"{mine}: its name is not one jemalloc makes" in proc.stderr and
      "carries no pid" not in proc.stderr and "lie in no" not in proc.stderr,
      f"the log's own dump named freely: {proc.returncode} {proc.stderr!r}")
empty = dict(log, allocations=[], stack_traces=[])
empty_path = write_file(directory, f"empty.{pid}.1.json", json.dumps(empty))
refused([empty_path, dump_path], empty_path, "no allocations")
refused([log_path], log_path, "carries no memory map")
refused(["--sample", "inuse_space", log_path, dump_path], "only objects freed while it ran")
refused(["--sample", "byte_seconds", dump_path], "allocation log")
refused([log_path, dump_path, "--base", dump_path], "takes no --base")
stats = write_file(directory, "stats.json", json.dumps({"jemalloc": {"version": "5.3.0-0"}}))
refused([stats, dump_path], stats, "statistics", f"read it with jestat {stats}")
print("ok")
