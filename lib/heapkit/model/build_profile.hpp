// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/read/raw_dump.hpp"

#include <vector>

namespace heapkit {

struct BuildOptions {
    bool per_thread = false; // one sample per (stack, thread) instead of per stack
};

// Unsamples and merges `dumps` into one Profile. Each dump's addresses are placed in
// that dump's own mappings (ASLR differs per process); return addresses (every frame
// but the first) are moved back by one so they point into the call instruction.
// Names a jeprof symbolized file carried are attached as the locations' frames. The
// profile's time is the earliest dump's, its duration the span to the latest.
Profile build_profile(const std::vector<RawDump>& dumps, const BuildOptions& options);

} // namespace heapkit
