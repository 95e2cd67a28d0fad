# SPDX-License-Identifier: MIT
"""libheapkit-runtime's peak watcher in a service that climbs (fixtures/peak_climber.cpp),
read back by the tools as they are:
1. a climb to a peak, held, most of it freed, a lower climb, then SIGKILL: the kept
   captures hold the true peak (heapfold's in-use total of the highest within 5 % of the
   fixture's own count), no more were taken than the rate limit allows, no more kept
   than KEEP, the directory is under its cap, heapfold --growth over the directory (its
   dumps, or the directory itself) ranks the climbing site first, heapfold --base and
   jestat STATS --dump HEAP --smaps SMAPS read them;
2. a small cap and no rate limit: the cap holds, captures were deleted, the highest peak
   was not; a disk that is short: every capture skipped and counted, one line; a dead
   process's temporaries removed at the next start;
3. in a memory cgroup with a limit (v1 memory.limit_in_bytes or v2 memory.max; skipped
   with the reason where none can be made), grown until the OOM killer ends it: a danger
   capture exists from before the kill, and jestat explains it;
4. a directory that is a file, a growth of 0 %: one line, the watcher off, the program
   runs on."""

import glob
import os
import re
import signal
import subprocess
import time
import atexit

from heapkit_e2e import JEMALLOC_SO, check, fixture, run, skip_if_sanitized, tool, workdir

CLIMBER = fixture("peak_climber")
skip_if_sanitized(CLIMBER, "the climbing service runs under jemalloc, preloaded")
MIB = 1 << 20


def start(mode, directory, keep, max_bytes, min_interval_ms, growth, *, wrapper=(), env=None):
    env = dict(os.environ, LD_PRELOAD=JEMALLOC_SO,
               MALLOC_CONF="prof:true,lg_prof_sample:16", **(env or {}))
    process = subprocess.Popen([*wrapper, CLIMBER, mode, directory, str(keep), str(max_bytes),
                             str(min_interval_ms), str(growth)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    atexit.register(process.kill)  # a failed check leaves no fixture behind
    return process


def read_until_done(process, timeout=60):
    """The fixture's stdout lines up to "done" (its metrics among them)."""
    lines = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            check(False, f"the fixture ended early: {process.stderr.read()}")
        line = line.rstrip("\n")
        if line == "done":
            return lines
        lines.append(line)
    check(False, f"no 'done' within {timeout} s: {lines}")


def kill(process):
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)


def captures(directory):
    """{stem: meta dict}, the stems as PREFIX.PID.SEQ.TRIGGER."""
    found = {}
    for meta in glob.glob(f"{directory}/climber.*.meta"):
        fields = dict(line.split(" ", 1) for line in open(meta).read().splitlines())
        found[os.path.basename(meta)[:-len(".meta")]] = fields
    return found


def metric(lines, name, label=None):
    pattern = re.escape(name) + (r'\{[^}]*"' + label + r'"\}' if label else "") + r" (\d+)$"
    values = [int(m.group(1)) for line in lines if (m := re.match(pattern, line))]
    check(len(values) == 1, f"{name} {label}: {values} in {lines}")
    return values[0]


def in_use_total(heap):
    """heapfold's unsampled in-use bytes of a dump, over all stacks."""
    folded = run([tool("heapfold"), "-q", heap]).stdout
    return sum(int(line.rsplit(" ", 1)[1]) for line in folded.splitlines() if line)


def directory_bytes(directory):
    return sum(os.path.getsize(p) for p in glob.glob(f"{directory}/*") if os.path.isfile(p))


# 1. A climb, a peak held past the rate limit's window, a lower climb.
work = workdir()
keep, min_interval_ms = 3, 1000
process = start("climb", work, keep, 64 * MIB, min_interval_ms, 10)
lines = read_until_done(process)
kill(process)
peak = int(next(line.split()[1] for line in lines if line.startswith("peak ")))
elapsed_ms = int(next(line.split()[1] for line in lines if line.startswith("elapsed_ms ")))
kept = captures(work)
check(0 < len(kept) <= keep, f"{len(kept)} captures kept, KEEP is {keep}: {sorted(kept)}")
for stem in kept:
    for extension in ("heap", "stats.json", "smaps", "meta"):
        check(os.path.isfile(f"{work}/{stem}.{extension}"), f"{stem}.{extension} missing")
check(not glob.glob(f"{work}/.*"), f"temporaries left: {glob.glob(f'{work}/.*')}")
# Taken: one per window at most, and the one held back at each window's end.
taken = metric(lines, "heapkit_peaks_captures_total", "peak")
allowed = elapsed_ms // min_interval_ms + 1
check(2 <= taken <= allowed, f"{taken} peak captures in {elapsed_ms} ms, at most {allowed}")
deleted = metric(lines, "heapkit_peaks_deleted_total")
check(deleted == taken - len(kept), f"{deleted} deleted of {taken}, {len(kept)} kept")
highest = max(kept, key=lambda stem: int(kept[stem]["allocated"]))
total = in_use_total(f"{work}/{highest}.heap")
check(abs(total - peak) <= 0.05 * peak,
      f"the highest capture {highest} holds {total} bytes in use, the fixture held {peak} "
      f"at its peak")
check(directory_bytes(work) <= 64 * MIB, f"{directory_bytes(work)} bytes over the cap")
heaps = sorted(glob.glob(f"{work}/*.heap"))
check(len(heaps) == keep, f"{len(heaps)} dumps kept of {taken} taken, KEEP {keep}")
growth = run([tool("heapfold"), "-q", "--growth", *heaps]).stdout
check(growth == run([tool("heapfold"), "-q", "--growth", work]).stdout,
      "heapfold --growth DIR differs from heapfold --growth DIR/*.heap")
first = next(line for line in growth.splitlines() if line.strip().startswith("stack: "))
check(first.endswith("peak_climb_step"), f"growth ranks first: {first}\n{growth}")
first, last = sorted(kept, key=lambda stem: int(kept[stem]["time_ms"]))[::len(kept) - 1]
base = run([tool("heapfold"), "-q", "--base", f"{work}/{first}.heap", f"{work}/{last}.heap"])
check("peak_climb_step" in base.stdout, f"--base: {base.stdout}")
explained = run([tool("jestat"), f"{work}/{highest}.stats.json", "--dump",
                 f"{work}/{highest}.heap", "--smaps", f"{work}/{highest}.smaps"]).stdout
check("profile" in explained and "RSS" in explained, f"jestat: {explained}")

# 2. A cap of 160 KiB (some five captures of this fixture), no rate limit, 5 %: a dozen
# captures, the cap holds, the highest stays.
work = workdir()
cap = 160 << 10
process = start("climb", work, 1000, cap, 0, 5)
lines = read_until_done(process)
kill(process)
peak = int(next(line.split()[1] for line in lines if line.startswith("peak ")))
kept = captures(work)
check(metric(lines, "heapkit_peaks_deleted_total") > 0, f"nothing deleted: {lines}")
check(directory_bytes(work) <= cap, f"{directory_bytes(work)} bytes in {work}, cap {cap}")
highest = max(kept, key=lambda stem: int(kept[stem]["allocated"]))
total = in_use_total(f"{work}/{highest}.heap")
check(abs(total - peak) <= 0.05 * peak, f"the highest kept holds {total}, the peak was {peak}")

# 2b. A disk that is short (a capture must leave more free than there is): every capture
# skipped and counted, said in one line.
work = workdir()
process = start("climb", work, 3, 64 * MIB, 0, 10, env={"PEAK_CLIMBER_MIN_FREE": str(1 << 62)})
lines = read_until_done(process)
kill(process)
said = [line for line in process.stderr.read().splitlines() if line.startswith("watcher: ")]
check(metric(lines, "heapkit_peaks_skipped_total", "disk") >= 2 and not os.listdir(work)
      and len(said) == 1 and "free" in said[0] and said[0].endswith("(said once)"),
      f"a short disk: {lines} {said} {os.listdir(work)}")

# 2c. A capture the OOM killer cut short leaves a hidden temporary: the next start removes
# those of processes that are gone, not those of one that runs.
work = workdir()
dead = process.pid  # killed above
stale = os.path.join(work, f".climber.{dead}.3.danger.heap.AbCdEf")
live = os.path.join(work, f".climber.{os.getpid()}.0.peak.heap.AbCdEf")
for path in (stale, live):
    open(path, "w").write("half a dump")
process = start("bad", work, 3, 64 * MIB, 1000, 10)
out, err = process.communicate(timeout=30)
check(out == "started\nrunning\n", f"a good start: {out!r} {err!r}")
check(not os.path.exists(stale) and os.path.exists(live),
      f"temporaries after a start: {os.listdir(work)}")

# 4. Bad settings: one line, the program runs on.
work = workdir()
not_a_directory = os.path.join(work, "file")
open(not_a_directory, "w").close()
for directory, growth, says in ((not_a_directory, 10, "file"), (work, 0, "growth")):
    process = start("bad", directory, 3, 64 * MIB, 1000, growth)
    out, err = process.communicate(timeout=30)
    check(process.returncode == 0 and out.endswith("running\n") and says in out.splitlines()[0]
          and len(out.splitlines()) == 2, f"bad settings: {out!r} {err!r}")


# 3. The OOM killer.
def memory_cgroup():
    """A new child of this process's memory cgroup with a 96 MiB limit and no swap, as
    (directory, version), or the reason there is none."""
    own = open("/proc/self/cgroup").read().splitlines()
    v1 = [line.split(":", 2)[2] for line in own if "memory" in line.split(":")[1].split(",")]
    name = f"heapkit-peaks-{os.getpid()}"
    directory = ""
    try:
        if v1 and os.path.isdir("/sys/fs/cgroup/memory"):
            directory = f"/sys/fs/cgroup/memory{v1[0].rstrip('/')}/{name}"
            os.mkdir(directory)
            open(f"{directory}/memory.limit_in_bytes", "w").write(str(96 * MIB))
            if os.path.exists(f"{directory}/memory.memsw.limit_in_bytes"):
                open(f"{directory}/memory.memsw.limit_in_bytes", "w").write(str(96 * MIB))
            return directory, None
        v2 = [line[3:] for line in own if line.startswith("0::")]
        if v2 and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            directory = f"/sys/fs/cgroup{v2[0].rstrip('/')}/{name}"
            os.mkdir(directory)
            open(f"{directory}/memory.max", "w").write(str(96 * MIB))
            if os.path.exists(f"{directory}/memory.swap.max"):
                open(f"{directory}/memory.swap.max", "w").write("0")
            return directory, None
        return None, "no memory cgroup controller mounted"
    except OSError as error:
        if os.path.isdir(directory):
            os.rmdir(directory)
        return None, f"cannot make a memory cgroup with a limit here: {error}"


cgroup, why_not = memory_cgroup()
if cgroup is None:
    print(f"SKIP (part 3 only): {why_not}")
    raise SystemExit(0)
try:
    work = workdir()
    process = start("oom", work, 8, 256 * MIB, 10_000, 10,
                    wrapper=("sh", "-c", f'echo $$ > {cgroup}/cgroup.procs || exit 99; exec "$@"',
                             "sh"))
    process.wait(timeout=120)
    if process.returncode == 99:  # cgroup v2 refuses a process beside enabled controllers
        print(f"SKIP (part 3 only): cannot move a process into {cgroup}: "
              f"{process.stderr.read().strip()}")
        raise SystemExit(0)
    check(process.returncode == -signal.SIGKILL,
          f"the OOM killer should end it: status {process.returncode}, "
          f"{process.stderr.read()}")
    kept = captures(work)
    danger = [stem for stem in kept if stem.endswith(".danger")]
    check(len(danger) == 1, f"one danger capture expected: {sorted(kept)}")
    meta = kept[danger[0]]
    check(int(meta["cgroup_limit"]) == 96 * MIB and
          int(meta["cgroup_usage"]) >= 0.8 * 96 * MIB, f"danger capture: {meta}")
    stem = f"{work}/{danger[0]}"
    explained = run([tool("jestat"), f"{stem}.stats.json", "--dump", f"{stem}.heap",
                     "--smaps", f"{stem}.smaps"]).stdout
    check("RSS" in explained, f"jestat: {explained}")
finally:
    for _ in range(50):  # the killed process leaves the cgroup a moment later
        try:
            os.rmdir(cgroup)
            break
        except OSError:
            time.sleep(0.1)
print("PASS")
