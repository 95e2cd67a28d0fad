# SPDX-License-Identifier: MIT
"""Issue 37's big dumps (run.py --big): millions of stacks in hundreds of MB, one with
addresses reused as a service's are, one with every frame's address its own; heapkit's
two tools on each, with names and without, against the goal of a peak RSS at most twice
the file and a run of at most 20 s. Generated once and kept in the work directory (with
--keep DIR, between runs): a name says the shape, a file of that name is taken as is."""

import os

import gen_dump
import inputs
import report
from inputs import note
from measure import Command, Job
from tools import Row, fresh_directory

# gen_dump.py --big's kinds, at 10 M stacks unless run.py --big-stacks says otherwise.
KINDS = ("reuse", "unique")
STACKS = 10_000_000
GOAL_RSS_FACTOR = 2
GOAL_SECONDS = 20
MB = 1e6


def make(work, like, program, stacks=STACKS):
    """[(name, path)] of the big dumps, each written unless the work directory has it
    already (a rename makes it whole or absent)."""
    made = []
    for kind in KINDS:
        name = f"big-{inputs.count_label(stacks)}s-{kind}"
        path = os.path.join(work, f"{name}.heap")
        if not os.path.exists(path):
            note(f"writing {name} (gen_dump.py --big {kind}, {stacks} stacks)")
            gen_dump.generate_big(like, program, stacks, kind, seed=1, out=path + ".part")
            os.rename(path + ".part", path)
        made.append((name, path))
    return made


def rows(tools, name, dump, plan):
    """heapfold (folded and --text) and jeprof2pprof, naming frames (an empty frame cache
    each run) and with --no-symbolize."""
    cache = os.path.join(plan.out_dir, f"{name}.cache")
    out = []
    for label, program, extra, suffix in (
            ("heapfold", tools.heapfold, [], "folded"),
            ("heapfold --text", tools.heapfold, ["--text"], "txt"),
            ("jeprof2pprof", tools.jeprof2pprof, [], "pb.gz")):
        for bare in (False, True):
            flags = ["--no-symbolize"] if bare else []
            path = os.path.join(plan.out_dir, f"{name}.{label.replace(' ', '')}"
                                              f"{'.bare' if bare else ''}.{suffix}")
            command = Command([program, "-q", *extra, *flags, dump, "-o", path],
                              env={"HEAPKIT_CACHE_DIR": cache})
            job = Job([command], plan.timing, lambda: fresh_directory(cache))
            out.append(Row(None, label + (" --no-symbolize" if bare else ""), job,
                           output=path))
    return out


def table(measured):
    """One line per (dump, tool): the median wall and CPU seconds, MB/s, the peak RSS and
    its ratio to the file, and the verdict on the goals."""
    lines = []
    for name, size, taken in measured:
        for row in taken:
            r = row.result
            peak = r.peak_kib * 1024
            met = peak <= GOAL_RSS_FACTOR * size and r.median <= GOAL_SECONDS
            lines.append((name, f"{size / MB:.1f}", row.tool, f"{r.median:.2f}",
                          f"{r.cpu_median:.2f}", f"{size / MB / r.median:.0f}",
                          f"{peak / report.MIB:.0f}", f"{peak / size:.2f}",
                          "met" if met else "not met"))
    return (f"Big dumps (issue 37: peak RSS ≤ {GOAL_RSS_FACTOR}× the file, ≤ {GOAL_SECONDS} s; "
            f"names from an empty frame cache each run):\n" +
            report.markdown(("input", "MB", "tool", "wall s", "CPU s", "MB/s", "peak MiB",
                             "peak/file", "goal"), lines))
