# SPDX-License-Identifier: MIT
"""--base --text: percentages of the base's total, as go tool pprof -diff_base gives them
(they were of the net change: -2423 % for a small net). Two interval dumps of one leaky
run, compared by heapfold and by go tool pprof -top -diff_base on jeprof2pprof's output."""

import glob
import os
import re

from heapkit_e2e import (JEMALLOC_SO, PROFILE_CONF, check, fixture, go_pprof, run, tool,
                         workdir)

directory = workdir()
env = dict(os.environ, LD_PRELOAD=JEMALLOC_SO,
           MALLOC_CONF=f"{PROFILE_CONF},lg_prof_interval:20,prof_prefix:{directory}/jeprof")
run([fixture("leaky"), "12", "0"], env=env)
dumps = sorted(glob.glob(f"{directory}/jeprof.*.i*.heap"),
               key=lambda d: int(re.search(r"\.i(\d+)\.heap$", d).group(1)))
check(len(dumps) >= 6, f"leaky wrote {len(dumps)} interval dumps")
before, after = dumps[1], dumps[-1]

text = run([tool("heapfold"), "-q", "--text", "--base", before, after]).stdout
check(re.match(r"change of inuse_space: \S+ total, percentages of the base's \S+;", text),
      f"header: {text.splitlines()[0]!r}")
ours = {}
for line in text.splitlines()[2:]:
    fields = line.split()
    ours[fields[-1]] = float(fields[1].rstrip("%"))

pb = {}
for name, dump in (("before", before), ("after", after)):
    pb[name] = os.path.join(directory, f"{name}.pb.gz")
    run([tool("jeprof2pprof"), dump, "-o", pb[name]])
top = go_pprof("-top", "-sample_index=inuse_space", f"-diff_base={pb['before']}", pb["after"]).stdout
theirs = {}
for line in top.splitlines():
    match = re.match(r"^\s*-?[\d.]+\w*B?\s+(-?[\d.]+)%\s+-?[\d.]+%\s+\S+\s+-?[\d.]+%\s+(\S+)$", line)
    if match:
        theirs[match.group(2)] = float(match.group(1))
check("leak_steadily" in ours and "leak_steadily" in theirs,
      f"leak_steadily missing: ours {ours}, pprof {theirs}\n{top}")
for name in set(ours) & set(theirs):
    check(abs(ours[name] - theirs[name]) <= 0.02,
          f"{name}: heapfold {ours[name]}%, go tool pprof -diff_base {theirs[name]}%")
print("ok")
