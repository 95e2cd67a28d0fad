// SPDX-License-Identifier: MIT
#include "heapkit/model/profile.hpp"

namespace heapkit {

Result<void> check_sample_type(const Profile& profile, SampleType type) {
    // An empty profile (right after prof.reset) is valid for every type.
    if (needs_accum(type) && !profile.has_accum && !profile.samples.empty()) {
        return fail("{} needs accumulated counts, and the dump has none: run the program with "
                    "MALLOC_CONF=prof_accum:true",
                    name_of(type));
    }
    return {};
}

} // namespace heapkit
