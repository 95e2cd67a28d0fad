#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs them on their seed corpora
# for SECONDS (default 60) a target on average: the small text readers (the HTTP
# surface's http_request, page_query, bearer_token, symbol_body; the cache's
# debian_packages; the runtime's telemetry; jemalloc_copies' symbol tables: short inputs,
# quickly covered) get a quarter of SECONDS each, and the others share the rest of
# SECONDS x 11, so that a run of all fuzzes as long as it did with its first 11 targets.
# FUZZ_JOBS targets (default: one per core) run at a time. A crash, leak, timeout or
# sanitizer report fails the run; its reproducer is kept in $FUZZ_ARTIFACTS (default
# ./fuzz-artifacts). Ends with "N passed, N failed". Extra arguments go to every fuzzer
# (e.g. -runs=10000000). FUZZ_TARGETS (space-separated) runs only those targets.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
# Light: small text readers whose inputs are short and quickly covered.
light_targets="http_request page_query bearer_token symbol_body debian_packages telemetry jemalloc_copies"
all_targets="heap_v2 jeprof_symbolized maps gzip demangle symbolizer address_index agent_config jemalloc_stats prof_log pprof inflated_debug_file load_series $light_targets"
# The 11 targets a run of all once had SECONDS each: the whole run keeps that length.
budget_targets=11
targets=${FUZZ_TARGETS:-$all_targets}
for target in $targets; do
  case " $all_targets " in
  *" $target "*) ;;
  *)
    echo "run.sh: unknown fuzz target '$target' in FUZZ_TARGETS (targets: $all_targets)" >&2
    exit 1
    ;;
  esac
done
build=${FUZZ_BUILD_DIR:-build-fuzz}
artifacts=${FUZZ_ARTIFACTS:-$PWD/fuzz-artifacts}
# Runs started side by side (one per core) build one at a time: the lock is on this script.
(
  flock 9
  if [ ! -f "$build/build.ninja" ]; then
    CC=clang CXX=clang++ meson setup "$build" --wrap-mode=nodownload -Dfuzzing=true \
      -Dtests=disabled -Db_sanitize=address,undefined -Db_lundef=false \
      -Dcpp_args=-fno-sanitize-recover=undefined -Dc_args=-fno-sanitize-recover=undefined
  fi
  # Only what this script runs: the targets, and jeprof2pprof, which writes the pprof seeds.
  # The other tools and benchmarks are built, with gcc, by every other build.
  ninja -C "$build" cmd/jeprof2pprof $(printf "tests/fuzz/fuzz_%s " $targets)
) 9<tests/fuzz/run.sh
unset DEBUGINFOD_URLS # the symbolizer target must not reach the network

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$artifacts"
# Seeds: the checked-in text corpora, plus binary ones made here (nothing binary is
# committed): gzipped dumps, and small ELF files built from a fixture.
for target in heap_v2 jeprof_symbolized maps demangle jemalloc_stats prof_log debian_packages \
  telemetry; do
  cp -r "tests/fuzz/corpus/$target" "$work/$target"
done
mkdir -p "$work/gzip" "$work/symbolizer"
for dump in tests/fuzz/corpus/heap_v2/*; do
  gzip -c "$dump" > "$work/gzip/$(basename "$dump").gz"
done
cc -g -O1 -o "$work/symbolizer/pie" tests/fixtures/alloc_c.c
cc -g -O1 -fno-pie -no-pie -o "$work/symbolizer/nopie" tests/fixtures/alloc_c.c
strip -o "$work/symbolizer/stripped" "$work/symbolizer/pie"
# Compressed DWARF (SHF_COMPRESSED, zlib), as Debian's debug files have it: for the
# symbolizer, and, as separate debug files, for inflated_debug_file.
objcopy --compress-debug-sections=zlib "$work/symbolizer/pie" "$work/symbolizer/pie-zdebug"
mkdir -p "$work/inflated_debug_file"
for elf in pie nopie; do
  objcopy --only-keep-debug --compress-debug-sections=zlib "$work/symbolizer/$elf" \
    "$work/inflated_debug_file/$elf.debug"
done
mkdir -p "$work/jemalloc_copies" # ELF files with and without a static jemalloc's symbols
cp "$work/symbolizer/pie" "$work/symbolizer/stripped" "$work/jemalloc_copies/"
if [ -f /usr/lib/x86_64-linux-gnu/libjemalloc_pic.a ]; then
  cc -g -O1 -o "$work/jemalloc_copies/static" tests/fixtures/static_host.c \
    /usr/lib/x86_64-linux-gnu/libjemalloc_pic.a -lpthread -ldl -lm
fi
mkdir -p "$work/load_series" # three dumps of one program, as load_series.cpp cuts them
dump=tests/fuzz/corpus/heap_v2/real_dump.heap
{ cat "$dump"; printf '\n%%%%\n'; cat "$dump"; printf '\n%%%%\n'; cat "$dump"; } \
  > "$work/load_series/three"
mkdir -p "$work/pprof" # pprof profiles heapkit writes of the dumps, named and not (inflated)
for dump in tests/fuzz/corpus/heap_v2/*; do
  "$build/cmd/jeprof2pprof" --no-cache --no-symbolize "$dump" -o - | gzip -dc \
    > "$work/pprof/$(basename "$dump").pb"
done
# ... and one with names: the symbolizer's fixture run under jemalloc's profiling.
MALLOC_CONF="prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$work/named" \
  LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 "$work/symbolizer/pie" > /dev/null
"$build/cmd/jeprof2pprof" --no-cache "$work"/named.*.heap -o - | gzip -dc > "$work/pprof/named.pb"
rm -f "$work"/named.*.heap
mkdir -p "$work/address_index" # one range of one frame, build id "ab" (address_index.hpp)
{
  printf 'HKADDRIX\1\0\0\0\4\3\2\1\1\0\0\0\0\0\0\0'        # version 1, mark, DWARF, id: text 0
  printf '\2\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0'                # 2 ranges, 1 chain entry
  printf '\1\0\0\0\0\0\0\0\3\0\0\0\0\0\0\0\6\0\0\0\0\0\0\0' # 1 frame, 3 texts, 6 bytes
  printf '\0\20\0\0\0\0\0\0\0\0\0\0\1\0\0\0'                # 0x1000: chain 0, 1 frame
  printf '\20\20\0\0\0\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0'    # 0x1010: the end; chain: frame 0
  printf '\1\0\0\0\1\0\0\0\2\0\0\0\7\0\0\0\1\0\0\0\5\0\0\0' # f, f, a.c, 7:1, from 5
  printf '\0\0\0\0\2\0\0\0\2\0\0\0\1\0\0\0\3\0\0\0\3\0\0\0abfa.c' # texts
} > "$work/address_index/one"

mkdir -p "$work/agent_config" # the agent's environment: listen, delay, CPU
printf '127.0.0.1:6060\n1000\n1' > "$work/agent_config/v4"
printf '[::1]:0\n0\noff' > "$work/agent_config/v6"
# ... and the peak watcher's settings after them
printf ':6060\n100\n1\n/var/lib/x/peaks\nredis\nrss\n250\n5000\n12.5\n64M\n90\n1G\n20\nRTMIN+3\n4\n512M\n1G' \
  > "$work/agent_config/peaks"

# Each target's share: the light ones SECONDS/4; the others share what is left of
# SECONDS x budget_targets, scaled to the heavy targets chosen among all of them (0 stays
# 0: no time limit, for -runs=N).
light=0
heavy=0
for target in $targets; do
  case " $light_targets " in
  *" $target "*) light=$((light + 1)) ;;
  *) heavy=$((heavy + 1)) ;;
  esac
done
all_heavy=$(($(echo $all_targets | wc -w) - $(echo $light_targets | wc -w)))
light_seconds=$((seconds / 4))
heavy_seconds=$seconds
if [ "$heavy" -gt 0 ] && [ "$seconds" -gt 0 ]; then
  budget=$((seconds * budget_targets * heavy / all_heavy))
  heavy_seconds=$(((budget - light * light_seconds) / heavy))
fi
# At least a second each: libFuzzer reads -max_total_time=0 as no limit at all (run.sh 1
# gave the heavy targets 0 s, and ran until killed).
if [ "$seconds" -gt 0 ] && [ "$light_seconds" -eq 0 ]; then
  light_seconds=1
fi
if [ "$seconds" -gt 0 ] && [ "$heavy_seconds" -lt 1 ]; then
  heavy_seconds=1
fi

mkdir -p "$work/http_request" "$work/page_query" "$work/bearer_token" "$work/symbol_body"
printf '\x10GET /debug/pprof/heap?seconds=3 HTTP/1.1\r\nHost: 127.0.0.1:6060\r\nAuthorization: Bearer s3cret\r\n\r\n' \
  > "$work/http_request/get"
printf '\x07POST /pprof/symbol HTTP/1.1\r\nHost: [::1]\r\nAuthorization: bearer s3cret\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n0x1+0x2\r\n0\r\n\r\nGET / HTTP/1.0\r\n\r\n' \
  > "$work/http_request/chunked"
printf '\x40POST /pprof/conf?prof.active:true HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\nContent-Length: 3\r\n\r\nabc' \
  > "$work/http_request/origin"
printf 'seconds=30&frequency=100&symbolize=0' > "$work/page_query/cpu"
printf 'sample=alloc_space&width=%%32%%30%%30%%30&debug=0' > "$work/page_query/heap"
printf 's3cret\nBearer   s3cret ' > "$work/bearer_token/bearer"
printf 'tok\n[::1]:6060' > "$work/bearer_token/host"
printf '0x7f0012345678+0x55d0c0de+1f\n' > "$work/symbol_body/three"

# The targets run side by side, FUZZ_JOBS at a time (default: one per core): each still has
# its share of a core, and a run of all takes its budget over the cores.
jobs=${FUZZ_JOBS:-$(nproc)}
fuzz_one() {
  local target=$1 share=$heavy_seconds start=$SECONDS
  shift
  case " $light_targets " in
  *" $target "*) share=$light_seconds ;;
  esac
  if "$build/tests/fuzz/fuzz_$target" "$work/$target" -max_total_time="$share" \
      -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" "$@" 2>"$work/$target.log"; then
    {
      echo "== fuzz_$target: ${share}s"
      echo "fuzz_$target: clean after $((SECONDS - start)) s"
      grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$target.log" || true
    } > "$work/$target.result"
  else
    {
      echo "== fuzz_$target: ${share}s"
      tail -n 40 "$work/$target.log"
      echo "fuzz_$target: FAILED"
    } > "$work/$target.result"
    return 1
  fi
}
running=0
for target in $targets; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" "$@" &
  running=$((running + 1))
done
wait || true
passed=0
failed=0
for target in $targets; do # the results in the targets' order, whichever ended first
  cat "$work/$target.result" 2>/dev/null || echo "fuzz_$target: FAILED (no result)"
  if grep -q "^fuzz_$target: clean after" "$work/$target.result" 2>/dev/null; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
