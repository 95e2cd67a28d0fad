// SPDX-License-Identifier: MIT
// The reconciliation: from what the heap profile says the program holds to what the
// process has resident, one step at a time, each step a cause with the knob that moves it.
#pragma once

#include "heapkit/stats/jemalloc_stats.hpp"
#include "heapkit/stats/smaps.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heapkit::stats {

// One row of a waterfall: a step (bytes added to the running total; a gap may be
// negative) or a subtotal (the running total, as jemalloc itself reports it).
struct Row {
    std::string key;   // stable machine name: "allocated", "dirty", "other_anonymous", …
    std::string label; // what the table prints
    int64_t bytes = 0; // a step's bytes, or a subtotal's total
    bool subtotal = false;
    std::string what; // one sentence: what this memory is
    std::string knob; // what moves it; "" for subtotals
};

// A small size class and what its partly used slabs cost.
struct WastedBin {
    BinStats bin;
    uint64_t wasted = 0;      // bytes: curslabs × slab size − curregs × size
    double utilization = 0.0; // curregs / (curslabs × regions per slab)
};

// What a heap profile of the same moment says, as far as the reconciliation needs it.
struct ProfileFigures {
    int64_t inuse = 0; // bytes the program holds, unsampled
    // Live sampled objects below the smallest large size class (sampled counts, not
    // unsampled): jemalloc gives each an extent of that class of its own.
    uint64_t sampled_small_objects = 0;
    uint64_t sampled_small_bytes = 0; // their bytes (size classes)
    uint64_t sample_period = 0;       // bytes: 2^lg_prof_sample
};

struct Reconciliation {
    std::vector<Row> allocator; // profile → allocated → active → resident → mapped → virtual
    std::vector<Row> rss;       // the process's RSS split; empty without smaps
    std::vector<WastedBin> worst_bins; // by wasted bytes, largest first; none wasted left out
    uint64_t slab_waste = 0;           // over all bins
    JemallocStats stats;
    std::optional<ProfileFigures> profile;  // when a dump was given
    std::optional<ResidentMemory> resident; // when smaps was given
    // The command that shows which stacks hold the partly used slabs (heapfold --stats,
    // stats/fragmentation.hpp), when the dump and the statistics are files and slabs are
    // partly used; else empty.
    std::string per_stack_command;
};

// How many size classes worst_bins lists at most.
inline constexpr size_t worst_bins_listed = 10;

// `profile`: what the heap profile of the same moment says, when known.
Reconciliation reconcile(const JemallocStats& stats, std::optional<ProfileFigures> profile,
                         const std::optional<ResidentMemory>& resident);

} // namespace heapkit::stats
