// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/read/prof_log.hpp"
#include "heapkit/read/raw_dump.hpp"

#include <vector>

namespace heapkit {

struct LogBuildOptions {
    bool per_thread = false; // one sample per (stack, thread) instead of per stack
    // Samples per freeing stack and thread instead of the allocating ones: where memory is
    // freed, rather than where it was allocated.
    bool by_free_site = false;
};

// The allocation log as a Profile, one sample per allocating stack (or freeing stack,
// and per thread as asked), its addresses placed in `maps` (the executable mappings of a
// heap dump of the same process, or of the process itself). Each allocation is unsampled
// on its own with jemalloc's formula at the log's period: it weighs 1/(1 - exp(-usize/R)).
// alloc_* hold what was allocated (and freed) while logging, the log's types the rest;
// the profile's duration is the log's. Records of objects allocated before the log began
// (before its last free less its duration) are left out, and Profile::log_window_note
// says how many.
Profile build_log_profile(const ProfLog& log, const std::vector<MapEntry>& maps,
                          const LogBuildOptions& options);

} // namespace heapkit
