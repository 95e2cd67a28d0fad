# SPDX-License-Identifier: MIT
"""The cache of address indexes: a warm run gives byte-identical output to a cold one and
to --no-cache, one index per build id with DWARF; symbol-table answers are indexed apart,
and a debug file found later is used rather than them; concurrent runs share it safely
(one builds a key, the others wait for it); a damaged file is replaced; an unusable cache
directory is a warning, never a failure; the frame caches of earlier versions are removed.
By default (--index later) a run names new builds from their files and a detached
heapkit-index makes their indexes for the next run; it leaves a build another process is
indexing to that process."""

import fcntl
import os
import shutil
import subprocess
import time

from heapkit_e2e import check, fixture, go_pprof, run, run_fixture, tool, workdir

directory = workdir()
plugin = fixture("libplugin_fixture.so")
dump = run_fixture(fixture("inline_cpp"), directory, args=[plugin])
cache = os.path.join(directory, "cache")
indexes = os.path.join(cache, "index-2")
env = dict(os.environ, HEAPKIT_CACHE_DIR=cache, HEAPKIT_INDEX="now")
styles = [["--frame", "function+line", "--annotate-inline"], ["--frame", "address"], []]


def heapfold(*args, environment=env):
    return run([tool("heapfold"), *args, dump], env=environment)


def build_id(path):
    out = run(["readelf", "-n", path]).stdout
    return out.split("Build ID: ")[1].split()[0]


uncached = [heapfold("--no-cache", *style).stdout for style in styles]
check(not os.path.exists(cache), "--no-cache created the cache directory")
cold = heapfold(*styles[0])
check(cold.stdout == uncached[0], "the run that fills the cache changed the output")
for path in (fixture("inline_cpp"), fixture("libshared_fixture.so"), plugin):
    check(os.path.exists(os.path.join(indexes, build_id(path))),
          f"no index for {path} in {os.listdir(indexes)}")
for style, expected in zip(styles, uncached):
    check(heapfold(*style).stdout == expected, f"warm run differs with {style}")
pprof = []
for flag in (["--no-cache"], []):
    out = os.path.join(directory, f"profile{len(pprof)}.pb.gz")
    run([tool("jeprof2pprof"), *flag, dump, "-o", out], env=env)
    pprof.append([line for line in go_pprof("-raw", out).stdout.splitlines()
                  if not line.startswith("Time:")])  # the time of writing differs
check(pprof[0] == pprof[1], "warm jeprof2pprof output differs from --no-cache")

# Four runs at once, on an empty cache: every output is right and the files are indexes.
shutil.rmtree(indexes)
runs = [subprocess.Popen([tool("heapfold"), *styles[0], dump], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True) for _ in range(4)]
for process in runs:
    out, err = process.communicate(timeout=60)
    check(process.returncode == 0 and out == uncached[0], f"concurrent run: {err}")
check(not [n for n in os.listdir(indexes) if n.startswith(".") and n != ".locks"],
      "temporary files left behind")
check(heapfold(*styles[0]).stdout == uncached[0], "run after the concurrent ones")

# A damaged file: replaced by a good one, with a warning naming it.
damaged = os.path.join(indexes, build_id(fixture("inline_cpp")))
with open(damaged, "rb") as f:
    good = f.read()
with open(damaged, "r+b") as f:
    f.truncate(os.path.getsize(damaged) // 2)
proc = heapfold(*styles[0])
check(proc.stdout == uncached[0] and damaged in proc.stderr, "damaged index changed the run")
with open(damaged, "rb") as f:
    check(f.read() == good, "the replaced index is not the first one")

# A cache directory that cannot be made: one warning, and the output is still right.
blocked = os.path.join(directory, "not-a-directory")
with open(blocked, "w") as f:
    f.write("x")
proc = heapfold(*styles[0], environment=dict(os.environ, HEAPKIT_CACHE_DIR=blocked))
check(proc.returncode == 0 and proc.stdout == uncached[0], "blocked cache failed the run")
check(proc.stderr.count("warning: cache not used") == 1, f"no warning: {proc.stderr}")

# A stripped build: its names come from .dynsym and are kept under a key of their own.
# When its debug file turns up, the DWARF answers (with lines) replace them.
stripped_dir = workdir()
stripped = os.path.join(stripped_dir, "stripped_app")
shutil.copy(fixture("alloc_c_pie"), stripped)
run(["objcopy", "--only-keep-debug", stripped, stripped + ".debug"])
run(["strip", "--strip-all", stripped])
identity = build_id(stripped)
tree = os.path.join(stripped_dir, "debug-tree")
os.makedirs(os.path.join(tree, ".build-id", identity[:2]))
shutil.move(stripped + ".debug", os.path.join(tree, ".build-id", identity[:2],
                                              identity[2:] + ".debug"))
stripped_dump = run_fixture(stripped, stripped_dir)


def fold_stripped(*args):
    return run([tool("heapfold"), "--frame", "function+line", *args, stripped_dump],
               env=env).stdout


symbols_only = fold_stripped("--no-cache")
check(fold_stripped() == symbols_only, "cold run of the stripped build differs")
check(os.path.exists(os.path.join(indexes, identity + "-symbols")),
      f"no symbol-table index for the stripped build: {os.listdir(indexes)}")
check(not os.path.exists(os.path.join(indexes, identity)),
      "symbol-table answers were indexed as if they came from DWARF")
check(fold_stripped() == symbols_only, "warm run of the stripped build differs")
with_dwarf = fold_stripped("--no-cache", "--debug-dir", tree)
check(with_dwarf != symbols_only and "alloc_c.c:" in with_dwarf,
      f"the debug file gave no lines: {with_dwarf}")
check(fold_stripped("--debug-dir", tree) == with_dwarf,
      "indexed symbol-table answers were served although DWARF is now found")
check(os.path.exists(os.path.join(indexes, identity)), "no index of the build with its DWARF")
check(fold_stripped("--debug-dir", tree) == with_dwarf, "warm run with DWARF differs")

# The frame caches of earlier versions are removed; a link under such a name is removed,
# never what it leads to.
old = os.path.join(cache, "frames-4")
os.makedirs(old)
with open(os.path.join(old, identity), "w") as f:
    f.write("heapkit frame cache 4\n")
elsewhere = workdir()
with open(os.path.join(elsewhere, "keep"), "w") as f:
    f.write("x")
os.symlink(elsewhere, os.path.join(cache, "frames-3"))
fold_stripped()
check(not os.path.exists(old), "the retired frame cache is still there")
check(os.path.exists(os.path.join(elsewhere, "keep")), "a file behind a link was removed")

# By default, new builds are indexed by a detached heapkit-index, the run not waiting for
# it (its standard streams are not the run's: subprocess.run would wait for them).
later_cache = os.path.join(workdir(), "cache")
later_env = dict(os.environ, HEAPKIT_CACHE_DIR=later_cache, HEAPKIT_INDEX="later")
later_indexes = os.path.join(later_cache, "index-2")
first = run([tool("heapfold"), *styles[0], dump], env=later_env)
check(first.stdout == uncached[0], "the run that starts the indexer changed the output")
wanted = {build_id(fixture("inline_cpp")), build_id(fixture("libshared_fixture.so")),
          build_id(plugin)}
deadline = time.monotonic() + 60
while time.monotonic() < deadline and not wanted <= set(
        os.listdir(later_indexes) if os.path.isdir(later_indexes) else []):
    time.sleep(0.1)
check(wanted <= set(os.listdir(later_indexes)), "the detached indexer made no indexes in 60 s")
program_index = os.path.join(later_indexes, build_id(fixture("inline_cpp")))
os.utime(program_index, (1_000_000_000, 1_000_000_000))
check(run([tool("heapfold"), *styles[0], dump], env=later_env).stdout == uncached[0],
      "the run named from the detached indexer's indexes differs")
check(os.stat(program_index).st_mtime > 1_000_000_000, "the next run did not use the index")

# One builder per key: a build whose lock another process holds is left to it.
locks = os.path.join(later_indexes, ".locks")
stripped_key = identity + "-symbols"
with open(os.path.join(locks, stripped_key), "a+") as held:
    fcntl.flock(held, fcntl.LOCK_EX)
    proc = run([tool("heapkit-index"), "--background", "--cache-dir", later_cache, stripped],
               check=False)
    check(proc.returncode == 1 and "being made by another process" in proc.stderr,
          f"heapkit-index --background did not leave a locked build: {proc.stderr}")
    check(not os.path.exists(os.path.join(later_indexes, stripped_key)), "built under a lock")
proc = run([tool("heapkit-index"), "--background", "--cache-dir", later_cache, stripped])
check(os.path.exists(os.path.join(later_indexes, stripped_key)), "not built once unlocked")
print("ok")
