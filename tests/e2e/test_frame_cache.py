# SPDX-License-Identifier: MIT
"""The frame cache: a warm run gives byte-identical output to a cold one and to
--no-cache, one file per build id with DWARF; symbol-table answers are kept apart, and a
debug file found later is used rather than them; concurrent runs share it safely; a
damaged file is ignored and replaced; an unusable cache directory is a warning, never a
failure."""

import os
import shutil
import subprocess

from heapkit_e2e import check, fixture, go_pprof, run, run_fixture, tool, workdir

directory = workdir()
plugin = fixture("libplugin_fixture.so")
dump = run_fixture(fixture("inline_cpp"), directory, args=[plugin])
cache = os.path.join(directory, "cache")
frames = os.path.join(cache, "frames-4")
env = dict(os.environ, HEAPKIT_CACHE_DIR=cache)
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
    check(os.path.exists(os.path.join(frames, build_id(path))),
          f"no cache file for {path} in {os.listdir(frames)}")
for style, expected in zip(styles, uncached):
    check(heapfold(*style).stdout == expected, f"warm run differs with {style}")
pprof = []
for flag in (["--no-cache"], []):
    out = os.path.join(directory, f"profile{len(pprof)}.pb.gz")
    run([tool("jeprof2pprof"), *flag, dump, "-o", out], env=env)
    pprof.append([line for line in go_pprof("-raw", out).stdout.splitlines()
                  if not line.startswith("Time:")])  # the time of writing differs
check(pprof[0] == pprof[1], "warm jeprof2pprof output differs from --no-cache")

# Four runs at once, on an empty cache: every output is right and the files decode.
for name in os.listdir(frames):
    os.remove(os.path.join(frames, name))
runs = [subprocess.Popen([tool("heapfold"), *styles[0], dump], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True) for _ in range(4)]
for process in runs:
    out, err = process.communicate(timeout=60)
    check(process.returncode == 0 and out == uncached[0], f"concurrent run: {err}")
check(not [n for n in os.listdir(frames) if n.startswith(".")], "temporary files left behind")
check(heapfold(*styles[0]).stdout == uncached[0], "run after the concurrent ones")

# A damaged file: ignored, and replaced by a good one.
damaged = os.path.join(frames, build_id(fixture("inline_cpp")))
with open(damaged, "r+b") as f:
    f.truncate(os.path.getsize(damaged) // 2)
proc = heapfold(*styles[0])
check(proc.stdout == uncached[0] and proc.stderr == cold.stderr, "damaged cache file changed the run")
check(heapfold(*styles[0]).stdout == uncached[0], "the replaced file is wrong")

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
check(os.path.exists(os.path.join(frames, identity + "-symbols")),
      f"no symbol-table cache file for the stripped build: {os.listdir(frames)}")
check(not os.path.exists(os.path.join(frames, identity)),
      "symbol-table answers were kept as if they came from DWARF")
check(fold_stripped() == symbols_only, "warm run of the stripped build differs")
with_dwarf = fold_stripped("--no-cache", "--debug-dir", tree)
check(with_dwarf != symbols_only and "alloc_c.c:" in with_dwarf,
      f"the debug file gave no lines: {with_dwarf}")
check(fold_stripped("--debug-dir", tree) == with_dwarf,
      "cached symbol-table answers were served although DWARF is now found")
check(fold_stripped("--debug-dir", tree) == with_dwarf, "warm run with DWARF differs")
print("ok")
