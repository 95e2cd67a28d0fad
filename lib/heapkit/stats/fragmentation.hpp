// SPDX-License-Identifier: MIT
// The offline estimate of a fragmentation profile: each small size class's free regions in
// partly used slabs (jestat's per-bin fragmentation) charged to the stacks whose live
// objects sit in that class, from a heap dump and jemalloc's stats of the same moment.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/stats/jemalloc_stats.hpp"
#include "heapkit/util/error.hpp"

#include <string>
#include <string_view>

namespace heapkit::stats {

// The sample types of a fragmentation profile, and the slots of HeapValues they fill
// (Profile::named_types): free regions charged (count) and their bytes, beside the dump's
// own inuse_objects and inuse_space, so that one pprof or HTML page holds both.
inline constexpr std::string_view fragmentation_objects = "fragmentation_objects";
inline constexpr std::string_view fragmentation_space = "fragmentation_space";
inline constexpr SampleType fragmentation_objects_slot = SampleType::alloc_objects;
inline constexpr SampleType fragmentation_space_slot = SampleType::alloc_space;

// What the views call it, in their headers and titles.
inline constexpr std::string_view estimate_label =
    "an estimate: bins' totals exact, their split between stacks estimated";

// Whether `profile` is one charge_fragmentation made (by its note: a pprof of either mode
// read back is not known to be an estimate).
bool is_fragmentation_estimate(const Profile& profile);

// The frame of the pseudo-stack that holds a size class's free bytes no sampled stack
// has a live object in: "[unattributed: bin 96]".
std::string unattributed_frame(uint64_t class_size);

// The sentence every view of the estimate carries (Profile::notes): what it is and that
// the split between stacks is an estimate.
std::string fragmentation_note(std::string_view stats_source);

// Makes `profile` (a heap dump's, unsampled, not yet filtered) a fragmentation profile:
// slot alloc_objects becomes fragmentation_objects, alloc_space fragmentation_space (the
// dump's alloc_* are dropped), inuse_* stay; fragmentation_space is the default type.
// Each bin's figures add up exactly to jestat's (curslabs x slab size - curregs x region
// size; free regions: curslabs x regions per slab - curregs), the part no stack takes on
// a pseudo-stack of its own. Stacks of large objects are charged nothing. An error naming
// `stats_source` when the stats have no bins, and naming the dump when the profile is an
// allocation log's or a pprof's (their values are not live objects of one moment).
Result<void> charge_fragmentation(Profile& profile, const JemallocStats& stats,
                                  std::string_view stats_source);

} // namespace heapkit::stats
