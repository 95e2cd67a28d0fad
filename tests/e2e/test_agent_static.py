# SPDX-License-Identifier: MIT
"""The agent in programs that carry their own jemalloc (issue 42), built here from Debian's
libjemalloc_pic.a:
 - a C program with jemalloc linked in statically (no -rdynamic: mallctl only in .symtab),
   served alone and with a libjemalloc.so.2 preloaded beside it (the copy the program
   never calls: the served heap must still be the program's, and the host must not crash
   at exit);
 - a Rust service whose #[global_allocator] calls a `_rjem_`-prefixed static copy (the
   archive's public names renamed, as tikv-jemallocator's are), alone and with its C side
   on a preloaded libjemalloc.so.2 (two copies that both hold allocations: each is served,
   the second at ?jemalloc=);
 - the same C program stripped: one line that says why, and the program runs on.
Each served heap's in-use total is checked against the program's own stats.allocated for
that copy, read through its own mallctl; CPU profiles name the program's hot function; the
peak watcher captures the C program's climb."""

import glob
import os
import re
import shutil
import subprocess
import sys
import time

from agent_e2e import AGENT_SO, JEMALLOC_SO, Guest, http
from heapkit_e2e import FIXTURE_DIR, SOURCE_DIR, check, pprof_raw, pprof_total, run, workdir

ARCHIVE = os.path.join(os.path.dirname(JEMALLOC_SO), "libjemalloc_pic.a")
if not os.path.exists(ARCHIVE):
    print(f"SKIP: {ARCHIVE} not installed (Debian: libjemalloc-dev)")
    sys.exit(77)

directory = workdir()
# Sampling every 16 kB: the 64 kB blocks are all but certainly each sampled, so the
# unsampled total is within a few percent of what the program holds.
CONF = "prof:true,lg_prof_sample:14"


def build_static_host(stripped=False):
    program = os.path.join(directory, "static_host" + ("_stripped" if stripped else ""))
    run(["gcc", "-O1", "-g", "-o", program, os.path.join(SOURCE_DIR, "fixtures", "static_host.c"),
         ARCHIVE, "-lpthread", "-ldl", "-lm"] + (["-s"] if stripped else []))
    return program


def ask(guest, line="state"):
    """The program's answer to one line: its own jemalloc's stats.allocated, and the rest."""
    guest.process.stdin.write(line + "\n")
    guest.process.stdin.flush()
    answer = guest.process.stdout.readline()
    match = re.search(r"allocated=(\d+)", answer)
    check(match, f"no answer from the program: {answer!r}; stderr: {guest.lines[-10:]}")
    return int(match.group(1))


def start(program, args, preload, env=None):
    guest = Guest([program, *args], preload=preload, stdin=True, stdout=True,
                  env={"MALLOC_CONF": CONF, "HEAPKIT_START_DELAY_MS": "200", **(env or {})})
    check(guest.process.stdout.readline().strip() == "ready", "the program did not start")
    return guest


def heap_total(url, name, query=""):
    path = os.path.join(directory, f"{name}.pb.gz")
    status, _, body = http(url + "/debug/pprof/heap" + query)
    check(status == 200, f"{name}: /debug/pprof/heap{query}: {status} {body[:300]!r}")
    with open(path, "wb") as f:
        f.write(body)
    _, samples, _ = pprof_raw(path)
    return samples, pprof_total(samples, "inuse_space", lambda frames: True)


def check_heap(url, name, truth, query="", holder=None):
    """The served heap's in-use total against the copy's own figure (within 10 %), and
    the function that holds it among its stacks."""
    samples, total = heap_total(url, name, query)
    check(abs(total - truth) <= 0.1 * truth,
          f"{name}: served in-use {total} B, the program's jemalloc says {truth} B")
    if holder:
        held = pprof_total(samples, "inuse_space", lambda frames: any(holder in f for f in frames))
        check(held >= 0.8 * truth, f"{name}: {holder} holds {held} of {total} B")


def check_cpu(url, name, hot):
    path = os.path.join(directory, f"{name}.cpu.pb.gz")
    status, _, body = http(url + "/debug/pprof/profile?seconds=2", timeout=60)
    check(status == 200, f"{name}: CPU profile: {status} {body[:300]!r}")
    with open(path, "wb") as f:
        f.write(body)
    _, samples, _ = pprof_raw(path)
    hits = sum(1 for s in samples if any(hot in f for f in s["frames"]))
    check(hits > 0, f"{name}: no CPU sample in {hot}: {[s['frames'][:3] for s in samples[:5]]}")


def finish(guest, name):
    """End of input: the program exits, by itself and cleanly (the agent stops at exit)."""
    guest.process.stdin.close()
    try:
        code = guest.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        guest.stop()
        check(False, f"{name}: did not exit at end of input")
    check(code == 0, f"{name}: exit status {code}; stderr: {guest.lines[-10:]}")


# --- a C program with its own static jemalloc ------------------------------------------
static_host = build_static_host()
peaks = os.path.join(directory, "peaks")
guest = start(static_host, ["26"], [AGENT_SO],
              {"HEAPKIT_PEAKS_DIR": peaks, "HEAPKIT_PEAKS_INTERVAL_MS": "100",
               "HEAPKIT_PEAKS_FLOOR": "40M", "HEAPKIT_PEAKS_MIN_INTERVAL_MS": "500"})
try:
    url = guest.url()
    line = guest.wait_for(r"serving http://\S+ \((.*)\)").group(1)
    check(f"linked into {static_host}" in line and "MALLOC_CONF" in line,
          f"the serving line does not say which jemalloc: {line}")
    check_heap(url, "static", ask(guest), holder="static_host_keep")
    # Nothing of the agent's own in the host's profile: libstdc++'s start-up pool (80 kB)
    # came with the loader before it needed the C library alone.
    samples, _ = heap_total(url, "static-again")
    ours = pprof_total(samples, "inuse_space",
                       lambda frames: any("libstdc++" in f or "heapkit" in f for f in frames))
    check(ours == 0, f"static: {ours} B of the agent's in the host's profile")
    check_cpu(url, "static", "static_host_spin")
    status, _, metrics = http(url + "/metrics")
    check(re.search(rf'heapkit_jemalloc_copy{{object="{re.escape(static_host)}",prefix="",'
                    rf'variable="MALLOC_CONF",linked="static",served="1",unused="0"}} 1',
                    metrics.decode()), f"/metrics: {metrics.decode()[-800:]}")
    status, _, index = http(url + "/")
    check(f"linked into {static_host}".encode() in index, "the index page does not say it")
    ask(guest, "climb")  # 26 -> 74 MB, over the 40 MB floor
    deadline = time.monotonic() + 15
    while not glob.glob(f"{peaks}/*.meta") and time.monotonic() < deadline:
        time.sleep(0.2)
    check(glob.glob(f"{peaks}/*.meta"), f"no peak capture of the climb: {guest.agent_lines()}")
    finish(guest, "static")
finally:
    guest.stop()

# --- the same, with a libjemalloc.so.2 preloaded that the program never calls ----------
# The old hint's advice. Then jemalloc's operator new takes memory from the preloaded copy
# and its operator delete frees it through the program's: any C++ code (the agent's) would
# crash the host. The agent refuses with one line, and the host lives and exits cleanly
# (it died at exit 3 runs of 3 before). Three runs that each live a while.
for attempt in range(3):
    guest = start(static_host, ["26"], [JEMALLOC_SO, AGENT_SO])
    try:
        said = guest.wait_for(r"heapkit-agent\[\d+\]: (.*)").group(1)
        check("libjemalloc.so.2 is loaded beside the program's own jemalloc" in said and
              "LD_PRELOAD=libheapkit-agent.so" in said and said.endswith("not serving"),
              f"static+preloaded: {said}")
        ask(guest)
        time.sleep(1)
        finish(guest, f"static+preloaded run {attempt + 1}")
        check(len(guest.agent_lines()) == 1, f"more than one line: {guest.agent_lines()}")
    finally:
        guest.stop()

# --- a C++ service linking the runtime and a static jemalloc ---------------------------
# Every allocation sampled: fill_cache holds exactly 256 strings of 4096 characters (256
# objects of jemalloc's 5120-byte class), the vector's buffer of 256 std::string of 32 bytes
# (8192) and the vector itself (24 bytes: the 32-byte class).
service = subprocess.Popen([os.path.join(FIXTURE_DIR, "static_service"), "0"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, MALLOC_CONF="prof:true,lg_prof_sample:0",
                                    HEAPKIT_EXAMPLE_BURN="1"))
try:
    url = service.stdout.readline().strip().replace("listening on ", "")
    check(url.startswith("http://127.0.0.1:"), f"static_service said {url!r}")
    samples, _ = heap_total(url, "static_service")
    cache = pprof_total(samples, "inuse_space", lambda frames: any("fill_cache" in f for f in frames))
    check(cache == 256 * 5120 + 8192 + 32, f"static_service: fill_cache holds {cache} B")
    check_cpu(url, "static_service", "burn_cpu_hot_loop")
    status, _, stats = http(url + "/debug/jemalloc/stats")
    check(status == 200 and b"allocated" in stats, f"static_service: stats {status} {stats[:200]!r}")
    status, _, index = http(url + "/")
    check(b"linked into " in index and b"static_service" in index, "static_service: index page")
finally:
    service.terminate()
    service.wait(timeout=30)

# --- stripped: nothing to find the copy by ---------------------------------------------
guest = start(build_static_host(stripped=True), ["4"], [AGENT_SO])
try:
    said = guest.wait_for(r"heapkit-agent\[\d+\]: (.*)").group(1)
    check("no symbol table" in said and "not serving" in said, f"stripped: {said}")
    ask(guest)
    finish(guest, "stripped")
    check(len(guest.agent_lines()) == 1, f"more than one line: {guest.agent_lines()}")
finally:
    guest.stop()

# --- a Rust service on a `_rjem_`-prefixed static copy ---------------------------------
if shutil.which("rustc") is None:
    print("SKIP: the Rust cases: rustc not installed (Debian: rustc)")
    print("ok")
    sys.exit(0)
renamed = os.path.join(directory, "librjem.a")
public = ["malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign",
          "valloc", "mallocx", "rallocx", "xallocx", "sallocx", "dallocx", "sdallocx",
          "nallocx", "mallctl", "mallctlnametomib", "mallctlbymib", "malloc_stats_print",
          "malloc_usable_size", "malloc_conf", "malloc_conf_2_conf_harder", "malloc_message"]
run(["objcopy", *[f"--redefine-sym={name}=_rjem_{name}" for name in public], ARCHIVE, renamed])
service = os.path.join(directory, "rjem_service")
run(["rustc", "-g", "-C", "opt-level=1", "-o", service,
     os.path.join(SOURCE_DIR, "fixtures", "rjem_service.rs"), "-C", f"link-arg={renamed}",
     "-l", "pthread", "-l", "dl", "-l", "m"])

# tikv-jemallocator's copy reads _RJEM_MALLOC_CONF; Debian's renamed archive still reads
# MALLOC_CONF, which the Guest sets.
guest = start(service, ["26", "0"], [AGENT_SO], {"_RJEM_MALLOC_CONF": CONF})
try:
    url = guest.url()
    line = guest.wait_for(r"serving http://\S+ \((.*)\)").group(1)
    check("(prefix _rjem_)" in line and "_RJEM_MALLOC_CONF" in line, f"serving line: {line}")
    check_heap(url, "rust", ask(guest), holder="Sessions::remember")
    check_cpu(url, "rust", "rjem_service::spin")
    # Every other heap page, on the prefixed copy.
    for page in ("/debug/pprof/heap?seconds=1", "/pprof/heap", "/pprof/heap/flamegraph",
                 "/debug/pprof/ui", "/debug/pprof/heap.folded", "/debug/jemalloc/stats"):
        status, _, body = http(url + page, timeout=60)
        check(status == 200, f"rust: {page}: {status} {body[:300]!r}")
        if page == "/debug/pprof/heap.folded":
            check(b"Sessions::remember" in body, f"rust: {page} lacks Sessions::remember")
    finish(guest, "rust")
finally:
    guest.stop()

# Its C side on a preloaded libjemalloc.so.2: both copies hold allocations.
guest = start(service, ["26", "10"], [JEMALLOC_SO, AGENT_SO], {"_RJEM_MALLOC_CONF": CONF})
try:
    url = guest.url()
    note = guest.wait_for(r"also another jemalloc in \S*libjemalloc\.so\.2.*holding (\d+) bytes")
    check(int(note.group(1)) >= 10 << 20, f"the C side's copy: {note.group(0)}")
    check_heap(url, "rust+c: the Rust copy", ask(guest), holder="Sessions::remember")
    samples, c_side = heap_total(url, "rust+c: the C copy", "?jemalloc=libjemalloc.so.2")
    held = pprof_total(samples, "inuse_space", lambda frames: any("c_side_keep" in f for f in frames))
    check(abs(held - (10 << 20)) <= (1 << 20), f"the C copy: c_side_keep holds {held} of {c_side}")
    finish(guest, "rust+c")
finally:
    guest.stop()
print("ok")
