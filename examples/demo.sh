#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds heapkit, profiles a small C++ program under the real
# jemalloc, and shows its heap through both tools, go tool pprof, heapfold --text, a
# flame graph (build/demo-heap.svg) and the interactive report (build/demo-report.html).
set -euo pipefail
cd "$(dirname "$0")/.."
./tests/install-packages.sh --demo # the build's packages and go; not the test suite's
[ -f build/build.ninja ] || meson setup build --wrap-mode=nodownload
# Only what the demo runs: the two tools (and the library they link) and the program it
# profiles, not the 300-odd targets of the tests and benchmarks (tests/run.sh builds them).
ninja -C build cmd/heapfold cmd/jeprof2pprof tests/alloc_cpp

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The program keeps 500 x 1 KiB in store::Pool<Block>::fill and 64 x 2 KiB in keep_arrays().
MALLOC_CONF="prof:true,prof_final:true,prof_accum:true,lg_prof_sample:0,prof_prefix:$out/jeprof" \
  ./build/tests/alloc_cpp
dump=$(ls "$out"/jeprof.*.f.heap)

echo
echo "== heapfold: collapsed stacks (bytes in use), ready for flamegraph.pl"
./build/cmd/heapfold "$dump"
echo
echo "== jeprof2pprof, then go tool pprof -top"
./build/cmd/jeprof2pprof "$dump" -o "$out/heap.pb.gz"
go tool pprof -top -symbolize=none "$out/heap.pb.gz"
echo
echo "== heapfold --text: the same as a table, without Go"
./build/cmd/heapfold --text "$dump"
./build/cmd/heapfold --svg "$dump" -o build/demo-heap.svg
echo
echo "== heapfold --svg: an interactive flame graph in build/demo-heap.svg (open it in a browser)"
./build/cmd/heapfold --html "$dump" -o build/demo-report.html
echo "== heapfold --html: every view in one page (Top, flame graph, call graph, callers and"
echo "   callees, source, refine) in build/demo-report.html (open it in a browser)"
