#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for SECONDS
# (default 60) on its seed corpus. A crash, leak, timeout or sanitizer report fails the
# run; its reproducer is kept in $FUZZ_ARTIFACTS (default ./fuzz-artifacts). Ends with
# "N passed, N failed". Extra arguments go to every fuzzer (e.g. -runs=10000000).
# FUZZ_TARGETS (space-separated) runs only those targets, e.g. to split a long run
# over two cores. FUZZ_BUDGET=N shares N seconds among the targets run instead (CI gives
# the 11 minutes it gave 11 targets of 60 s, so that more targets do not lengthen it).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
all_targets="heap_v2 jeprof_symbolized maps gzip demangle symbolizer frame_cache address_index agent_config jemalloc_stats prof_log debian_packages inflated_debug_file load_series telemetry"
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
if [ -n "${FUZZ_BUDGET:-}" ]; then
  count=$(echo $targets | wc -w)
  seconds=$((FUZZ_BUDGET / count))
fi
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
  ninja -C "$build"
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
mkdir -p "$work/load_series" # three dumps of one program, as load_series.cpp cuts them
dump=tests/fuzz/corpus/heap_v2/real_dump.heap
{ cat "$dump"; printf '\n%%%%\n'; cat "$dump"; printf '\n%%%%\n'; cat "$dump"; } \
  > "$work/load_series/three"
mkdir -p "$work/frame_cache" # an empty cache file, and one with a single two-frame entry
printf 'heapkit frame cache 4\n\4\3\2\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' > "$work/frame_cache/empty"
{
  printf 'heapkit frame cache 4\n\4\3\2\1\5\0\0\0\0\0\0\0'              # 5 texts:
  printf '\1\0\0\0f\0\0\0\0\3\0\0\0a.c\1\0\0\0g\2\0\0\0_g'               # f "" a.c g _g
  printf '\1\0\0\0\0\0\0\0\0\20\0\0\0\0\0\0\2\0\0\0'                      # 1 entry: 0x1000, 2 frames
  printf '\0\0\0\0\1\0\0\0\2\0\0\0\7\0\0\0\1\0\0\0\5\0\0\0'               # f, "", a.c, 7:1, from 5
  printf '\3\0\0\0\4\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0'               # g, _g, ""
} > "$work/frame_cache/one"

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

passed=0
failed=0
for target in $targets; do
  echo "== fuzz_$target: ${seconds}s"
  start=$SECONDS
  if "$build/tests/fuzz/fuzz_$target" "$work/$target" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$artifacts/$target-" "$@" 2>"$work/$target.log"; then
    passed=$((passed + 1))
    echo "fuzz_$target: clean after $((SECONDS - start)) s"
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$target.log" || true
  else
    failed=$((failed + 1))
    tail -n 40 "$work/$target.log"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
