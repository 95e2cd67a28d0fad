#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""heapkit's benchmarks: heapkit against jeprof and the symbolizers, side by side.

Makes its inputs on the spot (a generated C++ program, CPython and curl run under jemalloc
profiling, synthetic dumps against the C++ program's code at growing sizes), times every
tool on each, and the floor under them (a warm-up, then the median of --runs runs;
min–max; CPU seconds and peak RSS from wait4 in heapkit-measured-run), prints the tables and the verdicts on
issues 5's and 19's targets, and exits 1
when the tools' outputs disagree (different totals). --quick is the CI variant: small
inputs, one run each. --big runs issue 37's big dumps instead (millions of stacks,
hundreds of MB; big_dumps.py), never in --quick mode."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import agree
import big_dumps
import heap_dump
import inputs
import report
import runtime_rss
import targets
import tools
from inputs import note
from measure import Timing, measure, use_build

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (stacks, unique addresses) of the synthetic dumps: a stack-count series at 20k
# addresses, and an address series at 100k stacks.
STACK_SERIES = ((10_000, 20_000), (100_000, 20_000), (1_000_000, 20_000))
ADDRESS_SERIES = ((100_000, 1_000), (100_000, 20_000), (100_000, 100_000))
QUICK_SYNTHETIC = ((2_000, 500),)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__[
        __doc__.index("\n\n") + 2:], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"),
                        help="heapkit's meson build directory (default: build; configure "
                             "it with -Dbuildtype=release for figures worth quoting)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs a row (default 5)")
    parser.add_argument("--budget", type=float, default=60,
                        help="seconds: a row takes no further run once its timed runs took "
                             "this long together (default 60; the table says so)")
    parser.add_argument("--jeprof-runs", type=int, default=3,
                        help="timed runs of jeprof, which is slow, with no warm-up "
                             "(default 3)")
    parser.add_argument("--jeprof-max-mb", type=float, default=16,
                        help="skip jeprof on dumps larger than this (default 16 MiB)")
    parser.add_argument("--max-stacks", type=int, default=1_000_000,
                        help="leave out synthetic dumps with more stacks (default 1000000)")
    parser.add_argument("--quick", action="store_true",
                        help="small inputs, one run each, no warm-up: checks the harness "
                             "runs and the tools agree (for CI)")
    parser.add_argument("--big", action="store_true",
                        help="only the big dumps of issue 37 (10 M stacks each, written "
                             "once into the work directory: give --keep DIR to keep them)")
    parser.add_argument("--big-stacks", type=int, default=big_dumps.STACKS,
                        help="stacks of each big dump (default 10000000)")
    parser.add_argument("--keep", metavar="DIR", help="make inputs and outputs in DIR and "
                                                      "keep them (default: a temporary one)")
    parser.add_argument("--markdown", metavar="FILE", help="also write the tables here")
    args = parser.parse_args()
    if args.quick and args.big:
        parser.error("--big is not for --quick runs")
    if args.quick:
        args.runs, args.jeprof_runs = 1, 1
    return args


def check_prerequisites():
    missing = [p for p in ("g++", "jeprof", "llvm-symbolizer", "eu-addr2line", "addr2line",
                           "readelf", "nm", "go") if not shutil.which(p)]
    missing += [p for p in (inputs.JEMALLOC_SO, inputs.PYTHON, inputs.CURL)
                if not os.path.exists(p)]
    if missing:
        raise SystemExit(f"bench: missing {', '.join(missing)} (tests/install-packages.sh "
                         f"installs them)")


def make_inputs(args, work):
    """All inputs, and the synthetic ones of each scaling series, in order."""
    program_dump, program = inputs.cpp_program(work, args.quick)
    made = [program_dump] if args.quick else [program_dump, inputs.cpython(work),
                                               inputs.distro(work)]
    synthetic = {}
    specs = QUICK_SYNTHETIC if args.quick else STACK_SERIES + ADDRESS_SERIES
    for spec in dict.fromkeys(s for s in specs if s[0] <= args.max_stacks):
        synthetic[spec] = inputs.synthetic(work, program_dump.dump, program, *spec)
    made += synthetic.values()
    stack_series = [synthetic[s] for s in STACK_SERIES if s in synthetic]
    address_series = [synthetic[s] for s in ADDRESS_SERIES if s in synthetic]
    return made, stack_series, address_series


def measure_input(found, item, plan):
    note(f"timing the tools on {item.name} ({item.stacks} stacks, {item.addresses} addresses)")
    rows = tools.heapkit_rows(found, item, plan)
    rows.append(tools.jeprof_row(item, plan))
    rows += tools.anchor_rows(item, plan)
    rows += tools.floor_rows(found, item, plan)
    timed = [r for r in rows if r.job]
    for row, result in zip(timed, measure([r.job for r in timed])):
        row.result = result
    bare = next(r for r in rows if r.tool == "heapfold --no-symbolize")
    rate, method = tools.parse_rate(found, item, plan, bare)
    return report.Measured(item, rows, rate, method, heap_dump.debug_info_bytes(item.vaddrs))


def method(args, found):
    """How the figures were taken, to print above them."""
    version = subprocess.run([found.heapfold, "--version"], capture_output=True,
                             text=True).stdout.strip()
    warmup = "no warm-up" if args.quick else "after one warm-up run"
    plural = "" if args.runs == 1 else "s"
    return (f"{version} from {args.build_dir}; {os.cpu_count()} cores, load average "
            f"{os.getloadavg()[0]:.1f} at the end. Each row: median of {args.runs} timed "
            f"run{plural}, {warmup}, the tools taking turns (jeprof: {args.jeprof_runs}, no warm-up; fewer when a "
            f"row's runs pass {args.budget:.0f} s), wall seconds; CPU = user + system; peak "
            f"RSS: the largest of any run's processes.")


def runtime_memory(args):
    """The runtime's RSS before and after its first profile (runtime_rss.py): the example
    service alone and started once in --quick mode."""
    build = os.path.abspath(args.build_dir)
    if not os.path.exists(os.path.join(build, "examples", "example_service")):
        note("no example service in this build: no runtime memory rows")
        return {}
    kinds = ["example service"] if args.quick else runtime_rss.kinds_for(build)
    return runtime_rss.measure_all(build, 1 if args.quick else 3, kinds)


def render(measured, stack_series, address_series, found, args, memory):
    by_input = {m.input.name: m for m in measured}
    scaling = report.scaling_tables([by_input[i.name] for i in stack_series],
                                    [by_input[i.name] for i in address_series])
    cache = "" if found.has_cache else \
        " (this heapkit has no frame cache: no warm-cache rows)"
    return "\n\n".join(filter(None, (
        method(args, found),
        "Inputs:\n" + report.inputs_table(measured),
        f"Times{cache}:\n" + report.results_table(measured),
        scaling,
        memory and "The runtime's memory (runtime_rss.py; " +
        ("one start each" if args.quick else "medians of 3 starts") + "):\n" +
        runtime_rss.table(memory),
        targets.summary(measured, targets.runtime_targets(memory, runtime_rss.growth))))) + "\n"


def big(args, found, work):
    """--big: the big dumps' table alone."""
    program_dump, program = inputs.cpp_program(work, False)
    plan = tools.Plan(Timing(args.runs, True, args.budget), None, 0, os.path.join(work, "out"))
    measured = []
    for name, dump in big_dumps.make(work, program_dump.dump, program,
                                     args.big_stacks):
        note(f"timing the tools on {name}")
        rows = big_dumps.rows(found, name, dump, plan)
        for row, result in zip(rows, measure([r.job for r in rows])):
            row.result = result
        measured.append((name, os.path.getsize(dump), rows))
    text = method(args, found) + "\n\n" + big_dumps.table(measured) + "\n"
    print(text, end="")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    return 0


def main():
    args = parse_args()
    check_prerequisites()
    found = tools.find_tools(args.build_dir)
    use_build(args.build_dir)
    work = args.keep or tempfile.mkdtemp(prefix="heapkit-bench-")
    os.makedirs(os.path.join(work, "out"), exist_ok=True)
    if args.big:
        try:
            return big(args, found, work)
        finally:
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)
    try:
        made, stack_series, address_series = make_inputs(args, work)
        plan = tools.Plan(Timing(args.runs, not args.quick, args.budget),
                          Timing(args.jeprof_runs, False, args.budget),
                          int(args.jeprof_max_mb * (1 << 20)), os.path.join(work, "out"))
        measured = [measure_input(found, item, plan) for item in made]
        memory = runtime_memory(args)
        problems = [p for m in measured for p in agree.disagreements(m.rows)]
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    text = render(measured, stack_series, address_series, found, args, memory)
    print(text, end="")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    for problem in problems:
        print(f"bench: DISAGREEMENT: {problem}", file=sys.stderr)
    if problems:
        return 1
    print("bench: all tools agree on every input's totals", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
