# SPDX-License-Identifier: MIT
"""The runtime names its frames from address indexes that heapkit-index makes in a process
of its own: the first profile runs it once for the service's files (one index per build id
in the cache), later profiles run nothing, no DWARF is ever mapped into the service, and
the names agree with llvm-symbolizer, and the indexer inherits no descriptor of the
service's. Without an indexer (missing, failing), the service
still names its frames, from the files in process, says so in /metrics, and does not try
the same files again at once."""

import atexit
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

from heapkit_e2e import (check, check_names_like_llvm, mapping_ranges, pprof_raw, run, tool,
                         workdir)

service = os.path.join(os.environ["HEAPKIT_BUILD_ROOT"], "examples", "example_service")
if "libasan" in subprocess.run(["ldd", service], capture_output=True, text=True).stdout:
    print("sanitizer build: the jemalloc service cannot run under ASan; skipping")
    sys.exit(77)
directory = workdir()


def start(cache, indexer, stderr=None):
    """The service on a free port; `indexer` None: HEAPKIT_INDEXER unset, its default."""
    env = dict(os.environ, HEAPKIT_CACHE_DIR=cache, HEAPKIT_INDEXER=indexer)
    if indexer is None:
        del env["HEAPKIT_INDEXER"]
    process = subprocess.Popen([service, "0"], stdout=subprocess.PIPE, text=True, env=env,
                               stderr=stderr)
    atexit.register(process.kill)  # a failed check leaves no service behind (no-op once ended)
    base = process.stdout.readline().strip().replace("listening on ", "")
    check(base.startswith("http://127.0.0.1:"), f"service said {base!r}")
    return process, base


def stop(process):
    process.terminate()
    process.wait(timeout=30)
    check(process.returncode == 0, f"service exit status {process.returncode}")


def get(base, path):
    try:
        with urllib.request.urlopen(base + path, timeout=120) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def indexer_runs(base):
    text = get(base, "/metrics")[1].decode()
    return {result: int(count) for result, count in
            re.findall(r'^heapkit_indexer_runs_total\{result="(\w+)"\} (\d+)$', text, re.M)}


def lookups(base):
    """heapkit_symbolizer_lookups_total, all results together."""
    text = get(base, "/metrics")[1].decode()
    return sum(int(count) for count in re.findall(
        r'^heapkit_symbolizer_lookups_total\{result="\w+"\} (\d+)$', text, re.M))


def build_id(path):
    match = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", path]).stdout)
    return match.group(1) if match else None


def heap_profile(base, name):
    status, body = get(base, "/debug/pprof/heap")
    check(status == 200 and body[:2] == b"\x1f\x8b", f"/debug/pprof/heap: {status} {body[:80]!r}")
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(body)
    return path


def mapped_debug_info(pid):
    """Mappings of the service that hold DWARF: the memory file a debug file is inflated
    into, or a debug file itself."""
    with open(f"/proc/{pid}/maps") as f:
        return [line.strip() for line in f
                if "heapkit-debug-file" in line or "/usr/lib/debug/" in line or "/index-2/" in line]


def held_files(pid):
    """The regular files the service has open, and every file it maps (with the
    permissions and offset of each mapping)."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("/") and not target.startswith(("/dev/", "/proc/")):
            found.add(f"descriptor {fd}: {target}")
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].startswith("/"):
                found.add(f"mapped {fields[1]} at {fields[2]}: {fields[5].strip()}")
    return found


# 1. Indexes made once, out of process; names from them.
cache = workdir()
process, base = start(cache, tool("heapkit-index"))
get(base, "/metrics")  # the server's own first request
held_before = held_files(process.pid)
first = heap_profile(base, "first.pb.gz")
check(indexer_runs(base) == {"ok": 1, "failed": 0}, f"first profile: {indexer_runs(base)}")
_, samples, mappings = pprof_raw(first)
ranges = mapping_ranges(mappings)
used = {ranges[m][3] for s in samples for _, m, _ in s["locations"]}
indexes = set(os.listdir(os.path.join(cache, "index-2")))
for path in used:
    if path.startswith("[") or build_id(path) is None:
        continue
    check(build_id(path) in indexes or build_id(path) + "-symbols" in indexes,
          f"{path} (build {build_id(path)}) has no index in {sorted(indexes)}")
check(build_id(service) in indexes, f"the service (with DWARF) is not indexed by build id: {indexes}")
# The runtime is a guest: what it allocated on the service's thread (starting its server)
# or while loading is not sampled, so no stack runs through it and its library, DWARF and
# all, is not indexed for the first profile.
runtime_paths = sorted(path for path in used if "libheapkit-runtime" in path)
check(not runtime_paths, f"the service's profile has stacks through the runtime: {runtime_paths}")
check(not mapped_debug_info(process.pid), f"DWARF mapped in the service: {mapped_debug_info(process.pid)}")

# Names agree with llvm-symbolizer's, inline chains, files and lines, in the service's code.
check_names_like_llvm(samples, mappings, service)
check(any("(anonymous namespace)::open_sessions()" in s["frames"] for s in samples),
      "open_sessions not named")

# Later profiles: no indexer run, the same names, and their lookups counted.
looked_up = lookups(base)
check(looked_up > 0, "the first profile's lookups in the indexes are not counted")
second = heap_profile(base, "second.pb.gz")
check(indexer_runs(base) == {"ok": 1, "failed": 0}, f"second profile: {indexer_runs(base)}")
check(lookups(base) > looked_up, "the second profile's lookups are not counted")
check(any("(anonymous namespace)::open_sessions()" in s["frames"] for s in pprof_raw(second)[1]),
      "open_sessions not named in the second profile")
# Between requests the service holds none of the files it named frames with: no
# descriptor, no mapping (libelf reads a file through a private mapping of all of it);
# what it needs of them (build ids, jemalloc's mallctl) was read once and kept.
kept = held_files(process.pid) - held_before
check(not kept, f"files held between requests: {sorted(kept)}")
# Nor the pages of heapkit's code that the conversion ran (libheapkit: reading the dump,
# naming, writing pprof), let go of after each request: the kernel maps them again if
# another comes.


def resident_code_kb(pid, name):
    total, counting = 0, False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if re.match(r"^[0-9a-f]+-[0-9a-f]+$", fields[0]):
                counting = fields[1] == "r-xp" and len(fields) == 6 and \
                    os.path.basename(fields[5]).startswith(name)
            elif counting and fields[0] == "Rss:":
                total += int(fields[1])
    return total


deadline = time.monotonic() + 5  # the pages go once the answer is out
while resident_code_kb(process.pid, "libheapkit.so") > 64 and time.monotonic() < deadline:
    time.sleep(0.05)
check(resident_code_kb(process.pid, "libheapkit.so") <= 64,
      f"libheapkit's code resident between requests: "
      f"{resident_code_kb(process.pid, 'libheapkit.so')} kB")
stop(process)

# The indexer gets standard input, output and error, nothing else of the service's: no
# socket, no file it keeps open for names (a spy records its descriptors and arguments,
# then runs it). The files are shared out among one process per processor (up to 4), each
# file to one of them: the first profile waits for the largest, not for the sum.
spy = os.path.join(directory, "spy-indexer")
seen = os.path.join(directory, "indexer-runs")
os.mkdir(seen)
with open(spy, "w") as f:
    f.write(f"""#!/usr/bin/python3
import json, os, sys
names = {{}}
for fd in os.listdir("/proc/self/fd"):
    try:
        names[fd] = os.readlink(f"/proc/self/fd/{{fd}}")
    except OSError:
        pass
with open(os.path.join({seen!r}, str(os.getpid())), "w") as out:
    json.dump({{"descriptors": names, "files": sys.argv[sys.argv.index("--") + 1:]}}, out)
os.execv({tool("heapkit-index")!r}, [{tool("heapkit-index")!r}] + sys.argv[1:])
""")
os.chmod(spy, 0o755)
process, base = start(workdir(), spy)
heap_profile(base, "spied.pb.gz")
check(indexer_runs(base) == {"ok": 1, "failed": 0}, f"spied indexer: {indexer_runs(base)}")
runs = []
for name in os.listdir(seen):
    with open(os.path.join(seen, name)) as f:
        runs.append(json.load(f))
for run_seen in runs:
    inherited = {int(fd): name for fd, name in run_seen["descriptors"].items()
                 if int(fd) > 2 and not name.startswith("/proc/")}
    check(not inherited, f"the indexer inherited the service's descriptors: {inherited}")
files = [path for run_seen in runs for path in run_seen["files"]]
check(len(files) == len(set(files)) and len(files) >= 2,
      f"files given to the indexers: {[r['files'] for r in runs]}")
processors = min(len(os.sched_getaffinity(0)), 4)
check(len(runs) == min(processors, len(files)),
      f"{len(runs)} indexer processes for {len(files)} files on {processors} processors")
stop(process)

# 2. Another process of the same build: the indexes are there, nothing is run.
process, base = start(cache, tool("heapkit-index"))
heap_profile(base, "other_process.pb.gz")
check(indexer_runs(base) == {"ok": 0, "failed": 0}, f"indexed builds: {indexer_runs(base)}")
stop(process)

# 3. No indexer: a missing program, then one that fails. Names come from the files in the
# service, and /metrics counts the failures.
for indexer, why in ((os.path.join(directory, "no-such-indexer"), "missing"),
                     ("/bin/false", "failing")):
    process, base = start(workdir(), indexer)
    profile = heap_profile(base, f"{why}.pb.gz")
    check(indexer_runs(base) == {"ok": 0, "failed": 1}, f"{why} indexer: {indexer_runs(base)}")
    check(any("(anonymous namespace)::open_sessions()" in s["frames"] for s in pprof_raw(profile)[1]),
          f"{why} indexer: open_sessions not named from the files")
    # The same files are not handed to it again right away (each run reads their DWARF).
    heap_profile(base, f"{why}_again.pb.gz")
    check(indexer_runs(base) == {"ok": 0, "failed": 1}, f"{why} indexer, again: {indexer_runs(base)}")
    stop(process)

# 4. HEAPKIT_INDEXER set and empty: no indexer at all, nothing counted.
process, base = start(workdir(), "")
heap_profile(base, "in_process.pb.gz")
check(indexer_runs(base) == {"ok": 0, "failed": 0}, f"no indexer: {indexer_runs(base)}")
stop(process)

# 5. HEAPKIT_INDEXER unset, the service run from the build tree: this build's heapkit-index,
# not one where an install would put it (absent from a clone: a failure said on stderr).
cache = workdir()
process, base = start(cache, None, stderr=subprocess.PIPE)
heap_profile(base, "default_indexer.pb.gz")
check(indexer_runs(base) == {"ok": 1, "failed": 0}, f"default indexer: {indexer_runs(base)}")
stop(process)
said = process.stderr.read()
check("heapkit-index" not in said, f"the default indexer was not the build's: {said!r}")
print("ok")
