#!/bin/bash
# SPDX-License-Identifier: MIT
# The peak watcher's idle cost (BENCHMARKS.md): two idle redis-servers under the agent side
# by side, one with HEAPKIT_PEAKS_DIR, for SECONDS (default 60); prints the processes'
# utime+stime (clock ticks) and the watcher thread's own CPU time (schedstat, ns).
# Usage: bench/peaks_idle.sh BUILD_DIR [SECONDS]
set -eu
build=$(realpath "$1")
seconds=${2:-60}
agent=$build/lib/heapkit/agent/libheapkit-agent.so
work=$(mktemp -d)
trap 'kill $on $off 2>/dev/null; rm -rf "$work"' EXIT
start() { # NAME [VARIABLE=VALUE...]
    local name=$1
    shift
    mkdir "$work/$name"
    env MALLOC_CONF=prof:true HEAPKIT_PROGRAM=redis-server HEAPKIT_LISTEN=127.0.0.1:0 "$@" \
        LD_PRELOAD="$agent" redis-server --port 0 --unixsocket "$work/$name/sock" --save "" \
        --daemonize no --logfile "$work/$name/log" >/dev/null 2>"$work/$name/err" &
    echo $!
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
watcher_ns() {
    for task in /proc/"$1"/task/*; do
        if [ "$(cat "$task/comm")" = heapkit-peaks ]; then awk '{print $1}' "$task/schedstat"; fi
    done
}
on=$(start on HEAPKIT_PEAKS_DIR="$work/on/peaks")
off=$(start off)
sleep 5 # past the agent's start
on0=$(ticks "$on"); off0=$(ticks "$off"); w0=$(watcher_ns "$on")
sleep "$seconds"
on1=$(ticks "$on"); off1=$(ticks "$off"); w1=$(watcher_ns "$on")
echo "over $seconds s: watcher on $((on1 - on0)) ticks, off $((off1 - off0)) ticks" \
    "(CLK_TCK $(getconf CLK_TCK)); the watcher thread $(((w1 - w0) / 1000)) us;" \
    "captures: $(find "$work/on/peaks" -name '*.meta' | wc -l)"
