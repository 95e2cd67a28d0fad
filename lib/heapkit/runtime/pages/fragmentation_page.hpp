// SPDX-License-Identifier: MIT
// GET /debug/pprof/fragmentation: the exact fragmentation profile (README "Fragmentation"),
// from the sample fragmentation_sampler.hpp keeps when HEAPKIT_FRAGMENTATION is set.
#pragma once

#include "heapkit/runtime/request.hpp"

namespace heapkit::runtime {

// Gzipped pprof: for every sampled live object in a slab, its slab's free bytes over the
// slab's live objects (tcmalloc's Span::Fragmentation; experimental.utilization.batch_query
// gives each slab's free regions, regions and size), unsampled, summed per stack and
// labelled "bin" with the region size and arena. Types fragmentation_space/bytes (the
// default), fragmentation_objects/count (free regions so charged), inuse_objects/count and
// inuse_space/bytes (the sampled objects' own, in slabs only). 403 when the mode is off.
Response fragmentation_profile(const Request& request);

} // namespace heapkit::runtime
