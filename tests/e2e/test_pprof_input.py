# SPDX-License-Identifier: MIT
"""pprof profiles as heapfold's input, from real producers: heapkit's own jeprof2pprof
(named, and --no-symbolize: mappings without functions, as rust-jemalloc-pprof writes
them), go tool pprof -proto (Go's encoder) and Go's runtime (runtime/pprof's heap and CPU
profiles of a tiny Go program built here). Every view's totals are go tool pprof -raw's;
names are as go tool pprof shows them; --sample takes the profile's own type names."""

import gzip
import os
import re

from heapkit_e2e import (check, check_names_like_llvm, fixture, flame_frames, go_pprof, heapfold, html_data,
                         leaf_is, pprof_raw, pprof_total, run, run_fixture,
                         sum_where, tool, workdir, write_file)

directory = workdir()
dump = run_fixture(fixture("alloc_c_pie"), directory)
named = os.path.join(directory, "named.pb.gz")
unnamed = os.path.join(directory, "unnamed.pb.gz")
run([tool("jeprof2pprof"), dump, "-o", named])
run([tool("jeprof2pprof"), "--no-symbolize", dump, "-o", unnamed])
# Go's own encoder: other ids, field order and string table than heapkit's.
by_go = os.path.join(directory, "by_go.pb.gz")
go_pprof("-proto", "-symbolize=none", "-output", by_go, unnamed)


def total(samples, sample_type):
    return pprof_total(samples, sample_type, lambda frames: True)


def text_total(path, *flags):
    """The total on the first line of heapfold --text (counts are printed whole)."""
    first = run([tool("heapfold"), "--text", *flags, path]).stdout.splitlines()[0]
    match = re.match(r"^(\S+): (\d+) total", first)
    check(match, f"--text {path}: header {first!r}")
    return match.group(1), int(match.group(2))


def svg_total(path, *flags):
    frames = flame_frames(run([tool("heapfold"), "--svg", *flags, path]).stdout)
    return next(f for f in frames if f["name"] == "all")["value"]


def html_totals(path, *flags):
    """{type name: total} of heapfold --html's data."""
    data = html_data(run([tool("heapfold"), "--html", *flags, path, "-o", "-"]).stdout)
    # columns: per profile, per type, each leaf's value
    return {type_["name"]: sum(data["columns"][0][t]) for t, type_ in enumerate(data["types"])}


# --- heap profiles of the C fixture: every view's totals are go tool pprof's ------------
for path in (named, unnamed, by_go):
    types, samples, _ = pprof_raw(path)
    check(types == ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"],
          f"{path}: types {types}")
    for sample_type in types:
        stacks = heapfold("--sample", sample_type, path)
        check(sum(stacks.values()) == total(samples, sample_type),
              f"{path} {sample_type}: folded {sum(stacks.values())}, pprof {total(samples, sample_type)}")
    # The unnamed ones are named by heapkit's symbolizer, as the dump's are.
    stacks = heapfold(path)
    check(stacks == heapfold(dump), f"{path}: folded differs from the dump's own")
    check(sum_where(stacks, leaf_is("hold_pages")) > 0, f"{path}: no hold_pages leaf: {stacks}")
    name, value = text_total(path, "--sample", "inuse_objects")
    check(name == "inuse_objects" and value == total(samples, "inuse_objects"),
          f"{path} --text: {name} {value}")
    check(svg_total(path) == total(samples, "inuse_space"), f"{path} --svg total")
    check(html_totals(path)["inuse_space"] == total(samples, "inuse_space"),
          f"{path} --html total")

# Names as go tool pprof shows them, for the named profile.
_, samples, _ = pprof_raw(named)
names = {f for s in samples for f in s["frames"]}
check({"hold_pages", "keep_zeroed", "main"} <= names, f"go tool pprof's names: {names}")
check({"hold_pages", "keep_zeroed", "main"} <= {f for s in heapfold(named) for f in s.split(";")},
      "heapfold's names are go tool pprof's")

# Filters: the same samples go tool pprof keeps.
for flag, pprof_flag in (("--focus", "-focus"), ("--ignore", "-ignore")):
    stacks = heapfold(flag, "keep_zeroed", named)
    _, kept, _ = pprof_raw(named, f"{pprof_flag}=keep_zeroed")
    check(sum(stacks.values()) == total(kept, "inuse_space"),
          f"{flag}: {sum(stacks.values())} vs pprof's {total(kept, 'inuse_space')}")
stacks = heapfold("--hide", "^main$", named)
check(not any(";main;" in s for s in stacks), f"--hide main: {stacks}")
stacks = heapfold("--drop-frames", "hold_pages", named)
check(sum_where(stacks, leaf_is("main")) > 0, f"--drop-frames: {stacks}")

# --base: pprof against pprof, and against the dump: nothing changed.
for base in (unnamed, dump):
    proc = run([tool("heapfold"), "--base", base, named])
    for line in proc.stdout.splitlines():
        before, after = line.split()[-2:]
        check(before == after, f"--base {base}: {line!r}")

# --- jeprof2pprof names a pprof in place ----------------------------------------------
# What rust-jemalloc-pprof writes (mappings, no functions), with a label on every sample:
# named like the dump, and every sample, value, label and type kept as it was.
labelled = os.path.join(directory, "labelled.pb.gz")
run([tool("jeprof2pprof"), "--no-symbolize", "--label-dumps", dump, "-o", labelled])
fixture_program = fixture("alloc_c_pie")
for path in (labelled, by_go):
    out = path.replace(".pb.gz", ".named.pb.gz")
    proc = run([tool("jeprof2pprof"), path, "-o", out])
    before_types, before, _ = pprof_raw(path)
    after_types, after, after_mappings = pprof_raw(out)
    check(after_types == before_types, f"{path}: types {before_types} became {after_types}")
    check([(s["values"], s["labels"], [l[0] for l in s["locations"]]) for s in after]
          == [(s["values"], s["labels"], [l[0] for l in s["locations"]]) for s in before],
          f"{path}: samples, values, labels or addresses changed when named")
    check(path != labelled or all(s["labels"].get("dump") for s in after),
          f"{path}: the dump labels were lost")
    check(heapfold(out) == heapfold(dump), f"{path} named: folded differs from the dump's")
    check_names_like_llvm(after, after_mappings, fixture_program)
    # go tool pprof reads the names (it names nothing itself: -symbolize=none)
    top = go_pprof("-top", "-symbolize=none", "-sample_index=inuse_space", out).stdout
    check("hold_pages" in top, f"{path} named: go tool pprof -top has no hold_pages:\n{top}")
# A mapping whose build id is not its file's names another build: that file is not used.
with gzip.open(unnamed) as f:
    raw = f.read()
build_id = run(["readelf", "-n", fixture_program]).stdout.split("Build ID: ")[1].split()[0]
check(build_id.encode() in raw, f"{unnamed}: no build id {build_id} in its string table")
other_build = os.path.join(directory, "other_build.pb.gz")
with gzip.open(other_build, "wb") as f:
    f.write(raw.replace(build_id.encode(), ("0" * len(build_id)).encode()))
proc = run([tool("jeprof2pprof"), "--verbose", other_build, "-o",
            os.path.join(directory, "other_build.named.pb.gz")])
_, samples, _ = pprof_raw(os.path.join(directory, "other_build.named.pb.gz"))
check(not any("hold_pages" in s["frames"] for s in samples) and "another build" in proc.stderr,
      f"a mapping of another build id was named from the file: {proc.stderr}")
# A named profile is left as it is: nothing to add.
again = os.path.join(directory, "again.pb.gz")
run([tool("jeprof2pprof"), named, "-o", again])
check(pprof_raw(again) == pprof_raw(named), "a named pprof changed when named again")

# --- Go's runtime: a heap profile and a CPU profile -------------------------------------
go_dir = os.path.join(directory, "go")
os.mkdir(go_dir)
write_file(go_dir, "main.go", """package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var kept [][]byte

//go:noinline
func holdBlocks(n int) {
	for i := 0; i < n; i++ {
		kept = append(kept, make([]byte, 64<<10))
	}
}

//go:noinline
func spin(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x += i * i % 7
	}
	return x
}

func main() {
	runtime.MemProfileRate = 1
	cpu, _ := os.Create(os.Args[1] + ".cpu.pb.gz")
	pprof.StartCPUProfile(cpu)
	holdBlocks(64)
	s := 0
	for i := 0; i < 20; i++ {
		s += spin(20000000)
	}
	pprof.StopCPUProfile()
	cpu.Close()
	runtime.GC()
	heap, _ := os.Create(os.Args[1] + ".heap.pb.gz")
	pprof.WriteHeapProfile(heap)
	heap.Close()
	if s == 42 {
		println(len(kept))
	}
}
""")
env = dict(os.environ, GOCACHE=os.path.join(directory, "gocache"), GO111MODULE="off",
           HOME=directory)
run(["go", "build", "-o", "goprog", "main.go"], env=env, cwd=go_dir)
run([os.path.join(go_dir, "goprog"), os.path.join(go_dir, "go")], cwd=go_dir)
go_heap = os.path.join(go_dir, "go.heap.pb.gz")
go_cpu = os.path.join(go_dir, "go.cpu.pb.gz")

types, samples, _ = pprof_raw(go_heap)
stacks = heapfold(go_heap)  # inuse_space, pprof's default
check(sum(stacks.values()) == total(samples, "inuse_space"), "Go heap: inuse_space total")
held = sum_where(stacks, leaf_is("main.holdBlocks"))
check(held >= 64 << 16, f"Go heap: main.holdBlocks holds {held} bytes: {stacks}")
check(any(s.endswith("runtime.main;main.main;main.holdBlocks") for s in stacks),
      f"Go heap: names as go tool pprof shows them: {stacks}")

go_named = os.path.join(go_dir, "go.heap.named.pb.gz")
run([tool("jeprof2pprof"), go_heap, "-o", go_named])
check(pprof_raw(go_named) == pprof_raw(go_heap), "Go's heap profile changed when named")

types, samples, _ = pprof_raw(go_cpu)
check(types == ["samples", "cpu"], f"Go CPU types {types}")
for sample_type in types:
    stacks = heapfold("--sample", sample_type, go_cpu)
    check(sum(stacks.values()) == total(samples, sample_type),
          f"Go CPU {sample_type}: {sum(stacks.values())} vs {total(samples, sample_type)}")
    check(sum_where(stacks, leaf_is("main.spin")) > 0, f"Go CPU: no main.spin leaf: {stacks}")
name, value = text_total(go_cpu)  # default: cpu, as Go's default_sample_type says
check(name == "cpu" and value == total(samples, "cpu"), f"Go CPU --text: {name} {value}")
svg = run([tool("heapfold"), "--svg", "--sample", "samples", go_cpu]).stdout
check("Flame Graph of samples" in svg, "Go CPU: the flame graph's title names samples")
check(svg_total(go_cpu, "--sample", "samples") == total(samples, "samples"), "Go CPU --svg")
check(html_totals(go_cpu) == {"cpu": total(samples, "cpu"), "samples": total(samples, "samples")},
      f"Go CPU --html: {html_totals(go_cpu)}")

# Refused with both files named: a CPU profile against a heap profile; an unknown type.
proc = run([tool("heapfold"), "--base", go_heap, go_cpu], check=False)
check(proc.returncode == 1 and "go.cpu.pb.gz and" in proc.stderr and "go.heap.pb.gz" in proc.stderr
      and "measure different things" in proc.stderr, f"--base heap for CPU: {proc.stderr!r}")
proc = run([tool("heapfold"), "--sample", "inuse_space", go_cpu], check=False)
check(proc.returncode == 1 and "samples/count, cpu/nanoseconds" in proc.stderr,
      f"--sample inuse_space of a CPU profile: {proc.stderr!r}")
