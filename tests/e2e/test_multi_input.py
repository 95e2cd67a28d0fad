# SPDX-License-Identifier: MIT
"""Dumps of two processes (different ASLR bases) merge into one profile."""

import datetime
import os
import re
import subprocess

from heapkit_e2e import (check, check_near, fixture, go_pprof, heapfold, leaf_is, pprof_raw,
                         pprof_total, run, run_fixture, sum_where, tool, workdir)

directory = workdir()
first = run_fixture(fixture("alloc_c_pie"), directory)
second = run_fixture(fixture("alloc_c_pie"), directory)

merged = heapfold(first, second)
check_near(sum_where(merged, leaf_is("hold_pages")), 2 * 4096000, "merged hold_pages")

out = os.path.join(directory, "merged.pb.gz")
proc = run([tool("jeprof2pprof"), first, second, "-o", out])
_, samples, mappings = pprof_raw(out)
check_near(pprof_total(samples, "inuse_space", lambda f: f[0] == "hold_pages"), 2 * 4096000,
           "merged pprof hold_pages")

# --label-dumps keeps the dumps apart: a pprof label dump=<base name> on every sample,
# a root frame in heapfold (before the thread frame).
names = [os.path.basename(first), os.path.basename(second)]
labelled = os.path.join(directory, "labelled.pb.gz")
run([tool("jeprof2pprof"), "--label-dumps", first, second, "-o", labelled])
tags = go_pprof("-tags", labelled).stdout
check(all(re.search(r"^\s+\S+ \(50\.00%\): " + re.escape(n) + "$", tags, re.M) for n in names),
      f"go tool pprof -tags does not split the dumps: {tags!r}")
for name in names:
    _, kept, _ = pprof_raw(labelled, f"-tagfocus=dump={name}")
    check(kept and all(s["labels"] == {"dump": name} for s in kept),
          f"-tagfocus=dump={name} kept {[s['labels'] for s in kept]}")
    check_near(pprof_total(kept, "inuse_space", lambda f: f[0] == "hold_pages"), 4096000,
               f"hold_pages of {name}")
for flags in ([], ["--threads"]):
    plain = heapfold(*flags, first)
    stacks = heapfold("--label-dumps", *flags, first, second)
    for name in names:
        mine = {s.split(";", 1)[1]: v for s, v in stacks.items() if s.split(";")[0] == name}
        check(mine == plain, f"heapfold --label-dumps {flags}: stacks of {name} {mine} are not "
                             f"those of the dump alone {plain}")
    check(all(s.split(";")[0] in names for s in stacks), f"unlabelled stacks: {list(stacks)}")
# The flame graph's frames come from the same lines: a root frame per dump.
svg = run([tool("heapfold"), "--label-dumps", "--svg", first, second]).stdout
for name in names:
    check(re.search(r"<title>" + re.escape(name) + r" \([\d,]+ bytes, 50\.00%\)</title>", svg),
          f"no frame for {name} in the flame graph")
proc = run([tool("heapfold"), "--label-dumps", "--base", first, second], check=False)
check(proc.returncode == 1 and "excludes" in proc.stderr,
      f"--label-dumps with --base: exit {proc.returncode}, {proc.stderr!r}")

# The profile's time is the earliest dump's modification time, its duration the span to
# the latest (go tool pprof -raw prints Time exactly, Duration to four characters).
first_ns = 1_614_834_367_123_456_789  # 2021-03-04 05:06:07.123456789 UTC
os.utime(first, ns=(first_ns, first_ns))
os.utime(second, ns=(first_ns + 90 * 10**9, first_ns + 90 * 10**9))
for order in ((first, second), (second, first)):
    run([tool("jeprof2pprof"), *order, "-o", out])
    header = go_pprof("-raw", "-symbolize=none", out).stdout.split("Samples:")[0]
    check("Time: 2021-03-04 05:06:07.123456789 +0000 UTC\n" in header and
          "Duration: 1m30\n" in header, f"time and duration of {order}: {header!r}")
# Standard input has no file time: the time of conversion.
days = {datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")}
with open(first) as f:
    proc = subprocess.run([tool("jeprof2pprof"), "-", "-o", out], stdin=f, capture_output=True,
                          timeout=60)
check(proc.returncode == 0, f"jeprof2pprof -: {proc.stderr!r}")
header = go_pprof("-raw", "-symbolize=none", out).stdout.split("Samples:")[0]
days.add(datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"))
check(re.search(r"^Time: (\S+) ", header, re.M).group(1) in days and "Duration" not in header,
      f"time of a dump from standard input, expected a day of {days}: {header!r}")

twice = run([tool("heapfold"), first, first])
check("given more than once" in twice.stderr, f"no warning for a repeated input: {twice.stderr!r}")
print("ok")
