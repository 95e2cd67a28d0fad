# SPDX-License-Identifier: MIT
"""Times commands the way every benchmark row is taken: the jobs compared with each other
run in rounds, each job once a round, so that a pair is measured under the same load and
ratios can be taken round by round; an optional warm-up round first, then up to `runs`
timed rounds within a time budget a job. Wall seconds come from the harness's clock, CPU
seconds (in microseconds) and peak RSS from the kernel's account of the finished process,
taken by heapkit-measured-run (the machine is shared: CPU time is the steadier figure)."""

import os
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field



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
class Job:
    commands: list  # Command, run one after another and counted as one run
    timing: Timing
    prepare: object = lambda: None  # called, untimed, before every run


@dataclass
class Result:
    rounds: list  # the round of each timed run (0: a warm-up kept as a timed run)
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


def paired(a, b, combine, seconds="wall"):
    """The median over the rounds both `a` and `b` ran in of combine(a's, b's seconds);
    combine of the medians when they share no round."""
    a_by_round = dict(zip(a.rounds, getattr(a, seconds)))
    b_by_round = dict(zip(b.rounds, getattr(b, seconds)))
    common = sorted(set(a_by_round) & set(b_by_round))
    if not common:
        return combine(statistics.median(a_by_round.values()),
                       statistics.median(b_by_round.values()))
    return statistics.median(combine(a_by_round[r], b_by_round[r]) for r in common)


# heapkit-measured-run (bench/measured_run.c), set by use_build(): it runs each command
# and reports its CPU microseconds and peak RSS (see that file for why not wait4 here).
LAUNCHER = None


def use_build(build_dir):
    """Finds heapkit-measured-run in `build_dir`; every later run goes through it."""
    global LAUNCHER
    LAUNCHER = os.path.join(build_dir, "bench", "heapkit-measured-run")
    if not os.access(LAUNCHER, os.X_OK):
        raise SystemExit(f"bench: no {LAUNCHER}: build it first (ninja -C {build_dir})")


def run_once(command):
    """Runs `command`; returns (wall seconds, user + system seconds, peak RSS KiB). Like
    /usr/bin/time, the CPU seconds include the processes the command waited for (jeprof's
    nm and addr2line). Fails with the command's error output when it exits non-zero and
    `command.check`."""
    if LAUNCHER is None:
        raise SystemExit("bench: measure.use_build() was not called")
    env = dict(os.environ, **command.env)
    with open(command.stdin or os.devnull, "rb") as stdin, \
            open(command.stdout or os.devnull, "wb") as stdout, \
            tempfile.NamedTemporaryFile(prefix="bench-usage-", mode="r") as usage:
        start = time.perf_counter()
        proc = subprocess.run([LAUNCHER, usage.name, *command.argv], stdin=stdin,
                              stdout=stdout, stderr=subprocess.PIPE, env=env)
        seconds = time.perf_counter() - start
        micros, kib, _ = (int(field) for field in usage.read().split())
    if command.check and proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command.argv)} exited {proc.returncode}:\n"
                         f"{proc.stderr.decode(errors='replace')[-2000:]}")
    return seconds, micros / 1e6, kib


def run_all(commands, prepare):
    """One run: `prepare()` (untimed), then every command in turn. Returns (wall, cpu,
    peak KiB) summed over the commands (peak: the largest)."""
    prepare()
    wall, cpu, peak = 0.0, 0.0, 0
    for command in commands:
        seconds, cpu_seconds, kib = run_once(command)
        wall += seconds
        cpu += cpu_seconds
        peak = max(peak, kib)
    return wall, cpu, peak


def measure(jobs):
    """A Result for each job. A warm-up that alone outlasts the job's budget is kept as
    its one timed run: at that length what it warms up no longer shows."""
    taken = [[] for _ in jobs]  # per job: (round, wall, cpu, peak KiB)
    for job, runs in zip(jobs, taken):
        if job.timing.warmup:
            warmup = run_all(job.commands, job.prepare)
            if warmup[0] >= job.timing.budget:
                runs.append((0, *warmup))

    def wants_more(job, runs):
        return len(runs) < job.timing.runs and sum(r[1] for r in runs) < job.timing.budget

    round_number = 1
    while any(wants_more(job, runs) for job, runs in zip(jobs, taken)):
        for job, runs in zip(jobs, taken):
            if wants_more(job, runs):
                runs.append((round_number, *run_all(job.commands, job.prepare)))
        round_number += 1
    return [Result([r[0] for r in runs], [r[1] for r in runs], [r[2] for r in runs],
                   max(r[3] for r in runs), job.timing.runs) for job, runs in zip(jobs, taken)]
