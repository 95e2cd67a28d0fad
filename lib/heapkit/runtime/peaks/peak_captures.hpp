// SPDX-License-Identifier: MIT
// The peak watcher's directory: each capture a set of files named
// PREFIX.PID.SEQ.TRIGGER.{heap,stats.json,smaps,memory.stat,meta}, so that heapfold
// (--growth over DIR/*.heap, --base OLD NEW) and jestat (STATS --dump HEAP --smaps SMAPS)
// read them as they are; written atomically (a hidden temporary made with mkstemp in the
// directory, then renamed), kept within a count and a size.
#pragma once

#include "heapkit/runtime/peaks/peak_sample.hpp"
#include "heapkit/runtime/peaks/peak_triggers.hpp"
#include "heapkit/util/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace heapkit::runtime {

// What one capture holds: the files' contents, taken at one moment.
struct CaptureFiles {
    std::string heap;        // jemalloc's heap_v2 dump
    std::string stats_json;  // malloc_stats_print's JSON
    std::string smaps;       // /proc/self/smaps_rollup
    std::string memory_stat; // the cgroup's memory.stat ("" when none)
};

// A capture in the directory, as its .meta file (written last) says.
struct Capture {
    std::string stem; // "PREFIX.PID.SEQ.TRIGGER", the files' names without the extension
    uint64_t pid = 0;
    uint64_t seq = 0;
    Trigger trigger = Trigger::peak;
    int64_t time_ms = 0; // when taken, ms since the epoch
    MemorySample sample;
    uint64_t bytes = 0; // all its files
    bool has_memory_stat = false;
};

// The file extensions of a capture, the .meta last.
const std::vector<std::string>& capture_extensions();

// "PREFIX.PID.SEQ.TRIGGER" with `prefix` checked: letters, digits, '_', '-', '+' only.
std::string capture_stem(const std::string& prefix, uint64_t pid, uint64_t seq, Trigger trigger);
// An error naming what a prefix may hold.
Result<void> check_capture_prefix(const std::string& prefix);

// Writes the capture's files into `directory` (each atomically; .meta last, so that a
// capture is listed only once whole). An error leaves no file of it behind.
Result<Capture> write_capture(const std::string& directory, const std::string& stem,
                              const CaptureFiles& files, Trigger trigger,
                              const MemorySample& sample, int64_t time_ms);

// The captures of `prefix` in `directory` (those with a .meta), oldest first.
std::vector<Capture> list_captures(const std::string& directory, const std::string& prefix);

struct Retention {
    unsigned keep = 8;               // the last K captures...
    uint64_t max_bytes = 256u << 20; // ...and all of them within this many bytes
    bool by_rss = false;             // the highest peak by RSS instead of stats.allocated
};

// Deletes what `retention` does not keep: all but the last K, and then the oldest until
// the total fits, never the highest peak nor the last danger capture. Returns how many
// captures were deleted.
unsigned apply_retention(const std::string& directory, const std::string& prefix,
                         const Retention& retention);

// Deletes the hidden temporaries (".PREFIX.PID.…") a process of `prefix` that no longer
// runs left behind: one the OOM killer ended while writing a capture. Returns how many.
unsigned remove_stale_temporaries(const std::string& directory, const std::string& prefix);

// Bytes free to this process in `directory`'s file system, or nullopt.
std::optional<uint64_t> free_bytes(const std::string& directory);

} // namespace heapkit::runtime
