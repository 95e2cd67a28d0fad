// SPDX-License-Identifier: MIT
#include "heapkit/model/profile.hpp"

namespace heapkit {

Result<void> check_sample_type(const Profile& profile, SampleType type) {
    if (profile.from_log && !needs_accum(type) && !is_log_type(type)) {
        return fail("{}: an allocation log holds only objects freed while it ran, none in use; "
                    "choose alloc_space, alloc_objects, temporary_objects, temporary_space, "
                    "byte_seconds, cross_thread_objects or cross_thread_space",
                    name_of(type));
    }
    if (!profile.from_log && is_log_type(type)) {
        return fail("{} is measured from jemalloc's allocation log (MALLOC_CONF=prof_log:true, "
                    "or prof.log_start): give the log (.json) beside the heap dump",
                    name_of(type));
    }
    // An empty profile (right after prof.reset) is valid for every type.
    if (needs_accum(type) && !profile.has_accum && !profile.samples.empty()) {
        return fail("{} needs accumulated counts, and the dump has none: run the program with "
                    "MALLOC_CONF=prof_accum:true",
                    name_of(type));
    }
    return {};
}

} // namespace heapkit
