# SPDX-License-Identifier: MIT
"""The tools timed on each input, one table row each: heapkit's two tools (with a cold and
a warm cache of address indexes when heapkit has one), jeprof --collapsed, and the symbolizers fed the
same unique module addresses heapkit resolves."""

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from measure import Command, Job

PARSE_BENCH_RATE = re.compile(r"([\d.]+)\s*MB/s")


@dataclass
class Tools:
    heapfold: str
    jeprof2pprof: str
    parse_bench: str  # None when this build has no heapkit-parse-bench
    floor: str  # heapkit-floor; None when this build has none
    has_cache: bool  # heapkit keeps on-disk address indexes (--no-cache exists)


@dataclass
class Row:
    input: object  # inputs.Input
    tool: str
    job: object = None  # measure.Job; None when skipped
    result: object = None  # measure.Result, once measured
    note: str = ""
    output: str = None  # what the last run wrote, for the agreement checks


@dataclass
class Plan:
    """How rows are taken: every tool's timing, and jeprof's own (it is slow)."""
    timing: object  # measure.Timing
    jeprof_timing: object  # measure.Timing
    jeprof_max_bytes: int  # no jeprof row for bigger dumps
    out_dir: str


def find_tools(build_dir):
    """heapkit's programs in `build_dir` (whichever layout meson gave them)."""
    def program(*candidates):
        found = [p for p in candidates if os.path.isfile(p) and os.access(p, os.X_OK)]
        return found[0] if found else None

    heapfold = program(f"{build_dir}/cmd/heapfold", f"{build_dir}/cmd/heapfold/heapfold")
    jeprof2pprof = program(f"{build_dir}/cmd/jeprof2pprof",
                           f"{build_dir}/cmd/jeprof2pprof/jeprof2pprof")
    if not heapfold or not jeprof2pprof:
        raise SystemExit(f"bench: no heapfold or jeprof2pprof under {build_dir}: build it "
                         f"first (meson setup {build_dir} && ninja -C {build_dir})")
    help_text = subprocess.run([heapfold, "--help"], capture_output=True, text=True).stdout
    return Tools(heapfold, jeprof2pprof, program(f"{build_dir}/bench/heapkit-parse-bench"),
                 program(f"{build_dir}/bench/heapkit-floor"), "--no-cache" in help_text)


def fresh_directory(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)


def heapkit_rows(tools, item, plan):
    """heapfold and jeprof2pprof: each end to end, then with --no-symbolize."""
    rows = []
    for name, program, suffix in (("heapfold", tools.heapfold, "folded"),
                                  ("jeprof2pprof", tools.jeprof2pprof, "pb.gz")):
        rows += end_to_end_rows(tools, item, plan, name, program, suffix)
        out = os.path.join(plan.out_dir, f"{item.name}.{name}.bare.{suffix}")
        bare = Command([program, "-q", "--no-symbolize", item.dump, "-o", out])
        rows.append(Row(item, f"{name} --no-symbolize", Job([bare], plan.timing), output=out))
    return rows


def end_to_end_rows(tools, item, plan, name, program, suffix):
    """`program` on builds met for the first time ("cold cache": an empty cache each run;
    HEAPKIT_INDEX=never, so that no detached indexer runs beside the next timed run: the
    run names from the files as a first run with --index later does) and, when heapkit
    has a cache, the same with --index now (the indexes made in the run), and on indexed
    builds ("warm cache": the same dump again, its indexes made before the first round)."""
    cache = os.path.join(plan.out_dir, f"{item.name}.{name}.cache")

    def command(kind, cache_dir, index="never", dump=item.dump):
        out = os.path.join(plan.out_dir, f"{item.name}.{name}.{kind}.{suffix}")
        return Command([program, "-q", dump, "-o", out],
                       env={"HEAPKIT_CACHE_DIR": cache_dir, "HEAPKIT_INDEX": index}), out

    cold, out = command("cold", cache)
    label = f"{name}, cold cache" if tools.has_cache else name
    rows = [Row(item, label, Job([cold], plan.timing, lambda: fresh_directory(cache)),
                output=out)]
    if not tools.has_cache:
        return rows
    now, out = command("now", cache, "now")
    rows.append(Row(item, f"{name}, cold cache, --index now",
                    Job([now], plan.timing, lambda: fresh_directory(cache)), output=out))
    indexed = os.path.join(plan.out_dir, f"{item.name}.{name}.indexed")

    def prepared():
        if not os.path.isdir(indexed):
            fresh_directory(indexed)
            made, _ = command("prepare", indexed, "now")
            subprocess.run(made.argv, check=True, env=dict(os.environ, **made.env))

    warm, out = command("warm", indexed)
    rows.append(Row(item, f"{name}, warm cache", Job([warm], plan.timing, prepared), output=out))
    if item.other:
        # Another dump of the same builds, other addresses: what a second run costs once
        # the first run's detached indexer is done ("indexed": the indexes as the input's
        # run left them), and that dump again ("warm": the same command, since nothing
        # per address is kept; a cache of answers per address would differ). Their totals
        # differ from the input's: no output kept for the agreement checks.
        other, _ = command("new", indexed, dump=item.other)
        rows.append(Row(item, f"{name}, new dump, indexed", Job([other], plan.timing, prepared)))
        again, _ = command("new-again", indexed, dump=item.other)
        rows.append(Row(item, f"{name}, new dump, warm", Job([again], plan.timing, prepared)))
    return rows


def jeprof_row(item, plan):
    """jeprof --collapsed end to end; skipped above the size limit."""
    label = "jeprof --collapsed"
    if item.size > plan.jeprof_max_bytes:
        return Row(item, label, note=f"skipped: dump over {plan.jeprof_max_bytes >> 20} MiB "
                                     f"(--jeprof-max-mb)")
    out = os.path.join(plan.out_dir, f"{item.name}.jeprof.folded")
    command = Command(["jeprof", "--collapsed", item.binary, item.dump], stdout=out)
    return Row(item, label, Job([command], plan.jeprof_timing), note="no warm-up", output=out)


ANCHORS = (
    ("llvm-symbolizer --inlining", lambda path: ["llvm-symbolizer", "--inlining",
                                                 f"--obj={path}"]),
    ("eu-addr2line -i", lambda path: ["eu-addr2line", "-i", "-f", "-C", "-e", path]),
    ("addr2line -i", lambda path: ["addr2line", "-i", "-f", "-C", "-e", path]),
)


def anchor_rows(item, plan):
    """Each symbolizer once per module, the module's unique ELF vaddrs on standard input;
    a run is all modules in turn. (eu-addr2line exits 1 when any address has no name.)"""
    requests = []
    for i, (module, vaddrs) in enumerate(sorted(item.vaddrs.items())):
        path = os.path.join(plan.out_dir, f"{item.name}.module{i}.addresses")
        with open(path, "w") as f:
            f.writelines(f"{v:#x}\n" for v in vaddrs)
        requests.append((module, path))
    count = sum(len(v) for v in item.vaddrs.values())
    note = f"{count} addresses in {len(requests)} modules"
    return [Row(item, label, Job([Command(argv(module), stdin=path, check=False)
                                  for module, path in requests], plan.timing), note=note)
            for label, argv in ANCHORS]


def floor_rows(tools, item, plan):
    """The least any converter pays: reading the dump (cat), finding its lines (wc -l),
    and heapkit-floor, which starts like the tools (same libraries), maps the dump as they
    do and counts its lines."""
    commands = [("floor: cat", ["cat", item.dump]), ("floor: wc -l", ["wc", "-l", item.dump])]
    if tools.floor:
        commands.append(("floor: heapkit-floor", [tools.floor, item.dump]))
    return [Row(item, label, Job([Command(argv)], plan.timing)) for label, argv in commands]


def parse_rate(tools, item, plan, bare):
    """(MB/s, how it was measured): heapkit-parse-bench when built, else the input's size
    over the median wall time of `bare` (the heapfold --no-symbolize row, which also
    starts a process, maps modules and writes its output: a lower bound)."""
    if tools.parse_bench:
        out = subprocess.run([tools.parse_bench, item.dump, str(max(plan.timing.runs, 3))],
                             capture_output=True, text=True, check=True).stdout
        return float(PARSE_BENCH_RATE.findall(out)[-1]), "heapkit-parse-bench (parse alone)"
    return item.size / 1e6 / bare.result.median, "heapfold --no-symbolize wall time"
