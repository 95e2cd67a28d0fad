// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"

#include <cstdint>
#include <string_view>

namespace heapkit::stats {

// A process's resident memory by kind, from /proc/PID/smaps or smaps_rollup. Bytes.
struct ResidentMemory {
    uint64_t rss = 0;         // Rss: everything resident
    uint64_t anonymous = 0;   // Anonymous: private pages not backed by a file (incl. COW copies)
    uint64_t file = 0;        // the rest of Rss: files, the program's own pages, shared memory
    uint64_t stacks = 0;      // resident pages of [stack] and of threads' stacks (anonymous)
    bool per_mapping = false; // read from smaps (stacks known), not smaps_rollup
    uint64_t mappings = 0;    // mappings seen (1 for smaps_rollup)
};

// Parses /proc/PID/smaps or /proc/PID/smaps_rollup. A thread's stack is told apart from
// other anonymous memory by its shape, as glibc makes them: a read-write private
// anonymous mapping directly above a no-access one (the guard page), and "[stack]" for
// the main thread. Errors name `source` and the line.
Result<ResidentMemory> parse_smaps(std::string_view text, std::string_view source);

} // namespace heapkit::stats
