// SPDX-License-Identifier: MIT
// heapfold --stats in the pipeline: the statistics of the dump's moment found, read, and
// the profile made its fragmentation profile (stats/fragmentation.hpp).
#pragma once

#include "heapkit/load/load.hpp"

#include <cstdint>
#include <span>
#include <string>

namespace heapkit {

// The statistics of the dump's moment: options.stats, else, when a fragmentation type is
// chosen by name, those a peak capture (runtime/peaks) writes beside its dump:
// STEM.stats.json beside the one input STEM.heap. "" when there are none.
std::string stats_of(std::span<const Input> inputs, const LoadOptions& options);

// `profile` (one dump's, unsampled, before names: the pseudo-stacks' frames are kept as
// named) charged with the partly used slabs of the statistics at `stats_path` (JSON or
// text, gzipped or not, inflated up to `max_inflated` bytes: inflation_limit()); nothing
// done for "". Errors name the file: several dumps, statistics that do not parse.
Result<void> charge_fragmentation(Profile& profile, const std::string& stats_path,
                                  uint64_t max_inflated);

// The error for a fragmentation type chosen without statistics: where to get them.
Error fragmentation_needs_stats(std::string_view sample_name);

} // namespace heapkit
