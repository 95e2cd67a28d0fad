# SPDX-License-Identifier: MIT
"""Checks that the tools timed on one input agree: every output adds up to the same
inuse_space total, and a warm cache of address indexes changes nothing. Totals may differ by one unit
per stack: jeprof truncates each stack's float, heapkit rounds it, and stacks that become
one after allocator frames are cut are rounded once, not per part."""

import filecmp
import os
import re
import subprocess
import tempfile

from inputs import note

# go tool pprof -raw takes about a minute a million samples: bigger profiles go unchecked.
PPROF_MAX_STACKS = 200_000


def folded(path):
    """(total, lines) of a folded-stacks file."""
    total = lines = 0
    with open(path) as f:
        for line in f:
            total += int(line.rpartition(" ")[2])
            lines += 1
    return total, lines


def pprof_inuse_space(path):
    """(total inuse_space, samples) of a pprof profile, read back by go tool pprof -raw."""
    env = dict(os.environ, HOME=tempfile.gettempdir(), PPROF_TMPDIR=tempfile.gettempdir())
    text = subprocess.run(["go", "tool", "pprof", "-raw", "-symbolize=none", path], env=env,
                          capture_output=True, text=True, check=True).stdout
    samples = text.split("Samples:\n", 1)[1].split("Locations\n", 1)[0].splitlines()
    column = [t.split("/")[0] for t in samples[0].split()].index("inuse_space")
    values = [line.partition(":")[0].split() for line in samples[1:]
              if re.match(r"^\s+[-\d\s]+:", line)]
    return sum(int(v[column]) for v in values), len(values)


def disagreements(rows):
    """Messages for every disagreement among one input's rows (empty: all agree)."""
    outputs = {row.tool: row.output for row in rows if row.output}
    reference_tool = next(t for t in outputs if t.startswith("heapfold"))
    reference = folded(outputs[reference_tool])
    problems = []

    def compare(tool, totals):
        """Totals (value, lines) agree within one unit per line of either output."""
        if abs(reference[0] - totals[0]) > reference[1] + totals[1]:
            problems.append(f"{rows[0].input.name}: {tool} inuse_space total {totals[0]}, "
                            f"{reference_tool} {reference[0]}")

    for tool, path in outputs.items():
        if path.endswith(".folded"):
            compare(tool, folded(path))
        elif rows[0].input.stacks <= PPROF_MAX_STACKS:
            compare(tool, pprof_inuse_space(path))
        else:
            note(f"{rows[0].input.name}: {tool}'s total not checked (go tool pprof is slow "
                 f"past {PPROF_MAX_STACKS} samples)")
    warm = outputs.get("heapfold, warm cache")
    if warm and not filecmp.cmp(warm, outputs[reference_tool], shallow=False):
        problems.append(f"{rows[0].input.name}: heapfold's output with a warm cache differs "
                        f"from its output with a cold one")
    return problems
