# SPDX-License-Identifier: MIT
"""Makes the benchmark inputs in a work directory: the generated C++ program built and
run under jemalloc profiling, CPython under LD_PRELOADed jemalloc, and synthetic dumps
against the C++ program's code."""

import concurrent.futures
import dataclasses
import glob
import os
import subprocess
import sys
import time
from dataclasses import dataclass

import gen_dump
import gen_program
import heap_dump

HERE = os.path.dirname(os.path.abspath(__file__))
JEMALLOC_SO = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
# Every allocation sampled, freed ones kept: the most stacks a run can give.
PROFILE_CONF = "prof:true,prof_final:true,prof_accum:true,lg_prof_sample:0"
PYTHON = "/usr/bin/python3"
STARTED = time.monotonic()


@dataclass
class Input:
    name: str
    dump: str
    binary: str  # the program's executable as the dump's maps name it (jeprof's argument)
    stacks: int
    addresses: int  # unique lookup addresses (return addresses moved back by one)
    vaddrs: dict  # {module path: its unique lookup addresses as ELF vaddrs}
    size: int  # bytes of the dump
    # Another dump of the same program reaching other addresses (the benchmark's "new
    # dump" rows), or None.
    other: str = None


def describe(name, dump):
    """An Input for `dump`, counted; its program is the first file the maps name."""
    maps, _ = heap_dump.mappings(dump)
    binary = next(m.path for m in maps if m.path.startswith("/"))
    stacks, addresses = heap_dump.scan_stacks(dump)
    return Input(name, dump, binary, stacks, len(addresses),
                 heap_dump.module_vaddrs(maps, addresses), os.path.getsize(dump))


def build_program(directory, levels, width, branch):
    """Generates the C++ program and builds it with g++ -O2 -g, a process per core;
    returns the executable's path."""
    sources = os.path.join(directory, "program")
    os.makedirs(sources, exist_ok=True)
    files = gen_program.generate(levels, width, branch, seed=1)
    for name, text in files.items():
        with open(os.path.join(sources, name), "w") as f:
            f.write(text)
    units = [os.path.join(sources, n) for n in files if n.endswith(".cpp")]

    def compile_unit(path):
        subprocess.run(["g++", "-O2", "-g", "-c", path, "-o", path + ".o"], check=True)

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(compile_unit, units))
    program = os.path.join(sources, "bench_program")
    subprocess.run(["g++", "-O2", "-g", "-pthread", *(u + ".o" for u in units), "-o", program],
                   check=True)
    return program


def profile(argv, directory, prefix, env=None):
    """Runs `argv` with every allocation profiled by LD_PRELOADed jemalloc; returns the
    path of its final dump."""
    for stale in glob.glob(f"{directory}/{prefix}.*.heap"):  # from an earlier --keep run
        os.remove(stale)
    env = dict(os.environ, **(env or {}), LD_PRELOAD=JEMALLOC_SO,
               MALLOC_CONF=f"{PROFILE_CONF},prof_prefix:{directory}/{prefix}")
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    dumps = glob.glob(f"{directory}/{prefix}.*.f.heap")
    if len(dumps) != 1:
        raise SystemExit(f"bench: {argv[0]} left {len(dumps)} final dumps in {directory}")
    return dumps[0]


def cpp_program(directory, quick):
    """The generated program's dump (small in quick mode) and the program's path."""
    shape = dict(levels=5, width=16, branch=2) if quick else dict(levels=8, width=160, branch=3)
    note(f"building the generated C++ program ({shape})")
    program = build_program(directory, **shape)
    note("running it under jemalloc profiling")
    dump = profile([program], directory, "cpp")
    # Other addresses of the same program: a synthetic dump inside its functions.
    other = os.path.join(directory, "cpp-other.heap")
    gen_dump.generate(dump, program, 2_000, 1_000, seed=2, out=other)
    return dataclasses.replace(describe("cpp-program", dump), other=other), program


def cpython(directory):
    """CPython 3's dump, running bench/python_workload.py."""
    note("running CPython under jemalloc profiling")
    # A fixed hash seed keeps dict and set layouts, and so the allocations, the same.
    dump = profile([PYTHON, os.path.join(HERE, "python_workload.py")], directory, "cpython",
                   env={"PYTHONHASHSEED": "0"})
    other = profile([PYTHON, os.path.join(HERE, "python_other_workload.py")], directory,
                    "cpython-other", env={"PYTHONHASHSEED": "0"})
    return dataclasses.replace(describe("cpython", dump), other=other)


CURL = "/usr/bin/curl"


def distro(directory):
    """A stripped Debian program with many shared libraries: curl (33 of them: libcurl,
    gnutls, krb5, ldap, ssh...) fetching two local files. Most of its stacks run through
    libraries with only exported symbols, which is what a packaged service looks like."""
    note("running curl under jemalloc profiling")
    urls = ["file:///etc/services", "file:///usr/share/common-licenses/GPL-3"]
    dump = profile([CURL, "-s", *(a for url in urls for a in (url, "-o", os.devnull))],
                   directory, "curl")
    # Other code of the same builds: a header dump, the --libcurl source, the JSON summary.
    other = profile([CURL, "-s", "-D", os.devnull, "--libcurl", os.devnull, "-w", "%{json}",
                     "file:///etc/os-release", "-o", os.devnull], directory, "curl-other")
    return dataclasses.replace(describe("curl", dump), other=other)


def synthetic(directory, like, program, stacks, addresses):
    """A synthetic dump of `stacks` stacks over `addresses` unique addresses of `program`,
    with `like`'s maps."""
    name = f"synth-{count_label(stacks)}s-{count_label(addresses)}a"
    note(f"writing {name}")
    dump = os.path.join(directory, f"{name}.heap")
    gen_dump.generate(like, program, stacks, addresses, seed=1, out=dump)
    return describe(name, dump)


def count_label(n):
    for unit, scale in (("M", 1_000_000), ("k", 1000)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def note(message):
    """A progress line on standard error, with the seconds since the harness started."""
    print(f"bench [{time.monotonic() - STARTED:6.1f} s]: {message}", file=sys.stderr,
          flush=True)
