// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/model/profile.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace heapkit {

// A sample type beyond the heap values, with one value per sample.
struct ExtraSampleType {
    std::string type;            // e.g. "growth"
    std::string unit;            // e.g. "bytes_per_second"
    std::vector<int64_t> values; // per Profile::samples entry
};

// The profile as an uncompressed (write_pprof gzips it) perftools.profiles.Profile message;
// `extra` types come after the heap values' types.
std::string encode_pprof(const Profile& profile, const PprofOptions& options,
                         std::span<const ExtraSampleType> extra = {});

} // namespace heapkit
