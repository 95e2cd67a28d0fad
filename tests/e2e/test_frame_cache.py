# SPDX-License-Identifier: MIT
"""The frame cache: a warm run gives byte-identical output to a cold one and to
--no-cache, one file per build id with DWARF; concurrent runs share it safely; a damaged
file is ignored and replaced; an unusable cache directory is a warning, never a failure."""

import os
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
check("warning: cannot create the frame cache" in proc.stderr, f"no warning: {proc.stderr}")
print("ok")
