// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"

#include <optional>
#include <string_view>

namespace heapkit {

// The four heap measures, named as pprof names them.
enum class SampleType { alloc_objects, alloc_space, inuse_objects, inuse_space };

std::string_view name_of(SampleType type);
std::string_view unit_of(SampleType type); // "count" or "bytes"
std::optional<SampleType> parse_sample_type(std::string_view name);
int64_t value_of(const HeapValues& values, SampleType type);

// An error when `type` needs accumulated counts and the profile has none.
Result<void> check_sample_type(const Profile& profile, SampleType type);

} // namespace heapkit
