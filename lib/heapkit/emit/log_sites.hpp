// SPDX-License-Identifier: MIT
// An allocation log's sites, as its table and its lifetime chart show them.
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/model/profile.hpp"

#include <string>
#include <vector>

namespace heapkit {

// A site: the leaf of a sample's stack as write_folded spells it (allocator frames cut),
// with the sums of its samples and all their allocations' lifetimes.
struct LogSite {
    std::string name;
    HeapValues heap;
    LogValues log;
    std::vector<Lifetime> lifetimes;
    int64_t ranked_by = 0; // the chosen sample type's value
};

// The sites of a log's profile (every sample with allocations), the largest value of
// folded.sample first.
Result<std::vector<LogSite>> sites_of(const Profile& profile, const FoldedOptions& folded);

} // namespace heapkit
