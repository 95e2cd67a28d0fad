# SPDX-License-Identifier: MIT
"""Times commands the way every benchmark row is taken: optional warm-up, then up to
`runs` timed runs within a time budget; wall seconds from the harness's clock, CPU
seconds and peak RSS from `/usr/bin/time -v` (the machine is shared, so CPU time is the
steadier figure)."""

import os
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

TIME = "/usr/bin/time"


@dataclass
class Command:
    argv: list
    stdin: str = None  # path fed on standard input
    stdout: str = None  # path standard output goes to (else discarded)
    env: dict = field(default_factory=dict)  # added to the harness's environment
    check: bool = True  # fail on a non-zero exit status


@dataclass
class Timing:
    runs: int  # timed runs wanted
    warmup: bool  # one untimed run first
    budget: float  # seconds: no further run once the timed ones took this long together


@dataclass
class Result:
    wall: list  # seconds of each timed run
    cpu: list  # user + system seconds of each timed run
    peak_kib: int  # the largest maximum resident set size of any process, any run
    wanted: int  # timed runs wanted: more than len(wall) when the budget ran out

    @property
    def median(self):
        return statistics.median(self.wall)

    @property
    def cpu_median(self):
        return statistics.median(self.cpu)


def run_once(command, report):
    """Runs `command` under /usr/bin/time, its report written to `report`; returns wall
    seconds. Fails with the command's error output when it exits non-zero and
    `command.check`."""
    env = dict(os.environ, **command.env)
    with open(command.stdin or os.devnull, "rb") as stdin, \
            open(command.stdout or os.devnull, "wb") as stdout:
        start = time.perf_counter()
        proc = subprocess.run([TIME, "-v", "-o", report, *command.argv], stdin=stdin,
                              stdout=stdout, stderr=subprocess.PIPE, env=env)
        seconds = time.perf_counter() - start
    if command.check and proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command.argv)} exited {proc.returncode}:\n"
                         f"{proc.stderr.decode(errors='replace')[-2000:]}")
    return seconds


def time_report(path):
    """(user + system seconds, peak RSS KiB) from a /usr/bin/time -v report."""
    with open(path) as f:
        text = f.read()

    def number(label):
        return float(re.search(rf"{label}: ([\d.]+)", text).group(1))

    return (number(r"User time \(seconds\)") + number(r"System time \(seconds\)"),
            int(number(r"Maximum resident set size \(kbytes\)")))


def run_all(commands, prepare):
    """One run: `prepare()` (untimed), then every command in turn. Returns (wall, cpu,
    peak KiB) summed over the commands (peak: the largest)."""
    prepare()
    wall, cpu, peak = 0.0, 0.0, 0
    with tempfile.NamedTemporaryFile(prefix="bench-time-") as report:
        for command in commands:
            wall += run_once(command, report.name)
            seconds, kib = time_report(report.name)
            cpu += seconds
            peak = max(peak, kib)
    return wall, cpu, peak


def measure(commands, timing, prepare=lambda: None):
    """Result of timed runs of `commands` (a list run one after another, counted as one).
    A warm-up that alone outlasts the budget is kept as the one timed run: at that length
    what it warms up no longer shows."""
    taken = [run_all(commands, prepare)]
    if timing.warmup and taken[0][0] < timing.budget:
        taken = []
    while len(taken) < timing.runs and sum(t[0] for t in taken) < timing.budget:
        taken.append(run_all(commands, prepare))
    return Result([t[0] for t in taken], [t[1] for t in taken], max(t[2] for t in taken),
                  timing.runs)
