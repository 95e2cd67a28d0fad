# SPDX-License-Identifier: MIT
"""Shared helpers for heapkit's end-to-end tests: run fixture programs under real
jemalloc profiling, run heapkit's tools and the real consumers, parse their output."""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN_DIR = os.environ["HEAPKIT_BIN_DIR"]
FIXTURE_DIR = os.environ["HEAPKIT_FIXTURE_DIR"]
MAN_DIR = os.environ["HEAPKIT_MAN_DIR"]
JEMALLOC_SO = os.environ["HEAPKIT_JEMALLOC_SO"]

PROFILE_CONF = "prof:true,prof_final:true,prof_accum:true,lg_prof_sample:0"


def tool(name):
    return os.path.join(BIN_DIR, name)


def fixture(name):
    return os.path.join(FIXTURE_DIR, name)


def workdir():
    """A fresh directory, removed when the test process exits."""
    path = tempfile.mkdtemp(prefix="heapkit-e2e-")
    import atexit

    atexit.register(shutil.rmtree, path, True)
    return path


def run(args, *, check=True, stdin=None, env=None, binary=False):
    proc = subprocess.run(args, input=stdin, capture_output=True, env=env, timeout=60,
                          text=not binary)
    if check and proc.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, args))} exited {proc.returncode}\n"
                 f"stdout: {proc.stdout!r}\nstderr: {proc.stderr!r}")
    return proc


def run_fixture(program, directory, *, preload=True, args=()):
    """Runs `program` with heap profiling on and returns the path of its final dump."""
    env = dict(os.environ)
    env["MALLOC_CONF"] = f"{PROFILE_CONF},prof_prefix:{directory}/jeprof"
    if preload:
        env["LD_PRELOAD"] = JEMALLOC_SO
    before = set(glob.glob(f"{directory}/jeprof.*.heap"))
    run([program, *args], env=env)
    dumps = sorted(set(glob.glob(f"{directory}/jeprof.*.f.heap")) - before)
    check(len(dumps) == 1, f"{program} left {len(dumps)} final dumps in {directory}")
    return dumps[0]


def check(condition, message):
    if not condition:
        sys.exit(f"FAIL: {message}")


def near(actual, expected, tolerance=0.01):
    return abs(actual - expected) <= tolerance * expected


def check_near(actual, expected, what, tolerance=0.01):
    check(near(actual, expected, tolerance),
          f"{what}: got {actual}, expected {expected} within {tolerance:.0%}")


def parse_folded(text):
    stacks = {}
    for line in text.splitlines():
        stack, _, value = line.rpartition(" ")
        check(stack and value.isdigit(), f"malformed folded line {line!r}")
        check(stack not in stacks, f"stack printed twice: {stack!r}")
        stacks[stack] = int(value)
    return stacks


def heapfold(*args):
    return parse_folded(run([tool("heapfold"), *args]).stdout)


def sum_where(stacks, predicate):
    return sum(v for s, v in stacks.items() if predicate(s.split(";")))


def leaf_is(name):
    return lambda frames: frames[-1] == name


# --- go tool pprof ---------------------------------------------------------------------

def go_pprof(*args):
    env = dict(os.environ)
    env.setdefault("HOME", tempfile.gettempdir())
    env["PPROF_TMPDIR"] = tempfile.gettempdir()
    return run(["go", "tool", "pprof", *args], env=env)


LOCATION_NAME = re.compile(r"^(.*) (\S*):(-?\d+) s=(-?\d+)(\(.*\))?$")


def pprof_raw(path):
    """Loads `path` with go tool pprof -raw. Returns (sample_types, samples, mappings):
    samples are dicts {values, labels, frames (leaf first, innermost first)}."""
    text = go_pprof("-raw", "-symbolize=none", path).stdout
    section = None
    types, samples, locations, mappings = [], [], {}, []
    last_location = None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:":
            if not types:
                types = [t.split("/")[0] for t in line.replace("[dflt]", "").split()]
            elif re.match(r"^\s+[-\d\s]+:", line):
                values, _, ids = line.partition(":")
                samples.append({"values": [int(v) for v in values.split()],
                                "ids": [int(i) for i in ids.split()], "labels": {}})
            elif samples and ":[" in line:
                key, _, value = line.strip().partition(":[")
                samples[-1]["labels"][key] = value.rstrip("]")
        elif section == "Locations":
            match = re.match(r"^\s+(\d+): (0x[0-9a-f]+) M=(\d+) ?(.*)$", line)
            if match:
                last_location = int(match.group(1))
                names = []
                if match.group(4):
                    names.append(LOCATION_NAME.match(match.group(4)).group(1))
                locations[last_location] = names
            elif line.strip():
                locations[last_location].append(LOCATION_NAME.match(line.strip()).group(1))
        elif section == "Mappings" and line.strip():
            mappings.append(line)
    for sample in samples:
        sample["frames"] = [n for i in sample["ids"] for n in (locations[i] or ["?"])]
        sample["by_type"] = dict(zip(types, sample["values"]))
    return types, samples, mappings


def pprof_total(samples, sample_type, predicate):
    return sum(s["by_type"][sample_type] for s in samples if predicate(s["frames"]))
