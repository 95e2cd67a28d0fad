// SPDX-License-Identifier: MIT
// jemalloc's allocation log (prof.log_start / prof.log_stop, or MALLOC_CONF=prof_log:true):
// the JSON file src/prof_log.c writes as <prefix>.<pid>.<seq>.json. It holds one record per
// sampled allocation freed while the log ran (an object still live at the stop is not
// there), with the allocating and freeing thread and stack, both times and the usable size.
// It carries no memory map: the addresses are placed with a heap dump of the same process.
#pragma once

#include "heapkit/util/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// One entry of the log's "threads": jemalloc's thread uid (not an OS tid) and the name
// given with thread.prof.name ("" when none).
struct LogThread {
    uint64_t uid = 0;
    std::string name;
};

// One entry of "allocations". Threads and traces are indexes into ProfLog::threads and
// ProfLog::traces (checked in range by the reader).
struct LogAllocation {
    uint32_t alloc_thread = 0;
    uint32_t free_thread = 0;
    uint32_t alloc_trace = 0;
    uint32_t free_trace = 0;
    uint64_t alloc_nanos = 0; // jemalloc's profiling clock (prof_time_resolution), ns
    uint64_t free_nanos = 0;  // the same clock; never before alloc_nanos (the reader checks)
    uint64_t usize = 0;       // usable size, bytes (size-class rounded)

    uint64_t lifetime_nanos() const { return free_nanos - alloc_nanos; }
};

struct ProfLog {
    std::string source;          // the input's name, for messages
    uint64_t duration_nanos = 0; // from prof.log_start to the stop
    std::string version;         // jemalloc's version string
    unsigned lg_sample_rate = 0; // lg_prof_sample while logging: period 2^lg bytes
    std::string time_resolution; // "default" (coarse clock) or "high" (ns)
    int64_t pid = 0;
    std::vector<LogThread> threads;
    // Stack traces, each leaf first (the allocating trace begins in jemalloc's own
    // frames, the freeing one in its free path), runtime addresses as written.
    std::vector<std::vector<uint64_t>> traces;
    std::vector<LogAllocation> allocations;

    uint64_t sample_period() const { return uint64_t{1} << lg_sample_rate; }
};

// Parses a whole log; an error naming `source` for text that is not JSON (a cut file is
// told apart), or JSON that is not a jemalloc log, or an index out of range.
Result<ProfLog> parse_prof_log(std::string_view text, std::string_view source);

// Whether `text` (an input's first bytes) is JSON rather than a heap dump: the log begins
// with '{', a dump with "heap_v2/" or "--- symbol".
bool looks_like_prof_log(std::string_view text);

// The pid in a jemalloc file name, "<prefix>.<pid>.<seq>.json" or
// "<prefix>.<pid>.<seq>.<kind><n>.heap", or a dump named in that manner by hand
// ("<prefix>.<pid>.<seq>.heap", as prof.dump is often given), directories and ".gz"
// ignored, when it has one.
std::optional<int64_t> pid_in_file_name(std::string_view path);

} // namespace heapkit
