// SPDX-License-Identifier: MIT
// Internal to build_profile: not installed.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/read/raw_dump.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace heapkit {

// A dump's executable mappings, sorted by start, each with its Module index.
struct AddressSpace {
    struct Range {
        uint64_t start;
        uint64_t end;
        uint32_t module;
    };
    std::vector<Range> ranges;

    uint32_t module_of(uint64_t runtime) const {
        auto it = std::upper_bound(ranges.begin(), ranges.end(), runtime,
                                   [](uint64_t a, const Range& r) { return a < r.start; });
        if (it == ranges.begin()) {
            return no_module;
        }
        --it;
        return runtime < it->end ? it->module : no_module;
    }
};

// The modules of every dump's executable mappings, added to `profile` (each dump's main
// executable before any library; identical mappings of several dumps are one module),
// and each dump's address space over them.
std::vector<AddressSpace> add_modules(Profile& profile, const std::vector<RawDump>& dumps);

} // namespace heapkit
