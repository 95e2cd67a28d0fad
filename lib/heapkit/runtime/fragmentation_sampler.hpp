// SPDX-License-Identifier: MIT
// The exact fragmentation profile's sample (issue 44, README "Fragmentation"): a sample of
// the program's live allocations with their pointers and stacks, in memory of its own
// (sample_table.hpp), fed by libheapkit-fragmentation.so's malloc interposers where the
// agent has them, else by jemalloc's allocation hooks (experimental.hooks.install).
// jemalloc's own heap samples cannot serve: a sampled small object is promoted to an
// extent of its own (prof_promote), so its pointer is in no slab. Opt-in
// (HEAPKIT_FRAGMENTATION): BENCHMARKS.md says what each way costs.
#pragma once

#include "heapkit/runtime/mallctl.hpp"
#include "heapkit/util/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heapkit::runtime {

// HEAPKIT_FRAGMENTATION's value: nullopt when off ("", "0", "off"...), else the lg of the
// mean bytes between samples: 19 (512 KiB, jemalloc's default lg_prof_sample) for "1",
// "on"..., N for "lg_sample:N" (0 to 30). An error names the variable and what it takes.
Result<std::optional<unsigned>> parse_fragmentation_setting(const char* value);

// Starts sampling `mallctl`'s copy, one allocation per 2^lg_sample bytes on average:
// through libheapkit-fragmentation.so's interposers when they serve that copy, else
// through hooks installed in it. Once per process (neither way is ever stopped:
// jemalloc's removal of a hook does not wait for threads inside it); a second call
// returns the first's result. Maps the table first (sample_table.cpp states its size).
Result<void> start_fragmentation_sampling(const Mallctl& mallctl, unsigned lg_sample);

// What the Handler does when it is made: starts sampling in the serving copy when
// HEAPKIT_FRAGMENTATION asks for it (the runtime's and the agent's one setting), once per
// process; a bad value, or a jemalloc that cannot, is one notice (notices.hpp).
void start_fragmentation_from_environment();

// One sampled allocation still live.
struct SampledObject {
    uint64_t address = 0;         // the pointer the program got (runtime address)
    uint64_t size = 0;            // the bytes asked for, which the sampling counted
    std::vector<uint64_t> frames; // return addresses as unwound, the sampler's own first
};

// The sample at one moment, for a page (made on the asking thread, through malloc).
struct FragmentationSample {
    std::vector<SampledObject> objects;
    uint64_t mean_bytes = 0; // between samples: an object of size s was kept with
                             // probability 1 - exp(-s / mean_bytes)
    uint64_t dropped = 0;    // sampled objects not kept: their bucket or the stacks were full
    std::string way;         // how they were kept (interposers or hooks), for the comments
    uint64_t keeper = 0;     // a code address (runtime) in the object that kept them: the
                             // leading frames there and in jemalloc are not the program's
};

// The live sampled objects; an error when sampling was never started.
Result<FragmentationSample> fragmentation_sample();

// Whether fragmentation_sample() has a sample to give: pages link to it when it does.
bool fragmentation_sampling();

} // namespace heapkit::runtime
