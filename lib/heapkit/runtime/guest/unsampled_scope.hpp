// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/runtime/profiler.hpp"

#include <optional>

namespace heapkit::runtime {

// For its life, the calling thread's allocations are not sampled; then its own setting
// (thread.prof.active) is back. For the runtime's work on a thread of the host's (starting
// the server): what it keeps is the runtime's, and would otherwise stay in the host's
// profile for good, its stacks through the runtime's library, which the first profile
// would then have to index. Nothing without jemalloc or with sampling already off.
class UnsampledScope {
public:
    UnsampledScope();
    ~UnsampledScope();
    UnsampledScope(const UnsampledScope&) = delete;
    UnsampledScope& operator=(const UnsampledScope&) = delete;

private:
    std::optional<Profiler> m_paused; // set while this turned sampling off
};

} // namespace heapkit::runtime
