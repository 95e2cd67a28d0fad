// SPDX-License-Identifier: MIT
#include "heapkit/model/profile.hpp"

#include <iterator>
#include <vector>

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

Result<void> check_totals(const Profile& profile) {
    std::vector<SampleType> types{SampleType::alloc_objects, SampleType::alloc_space,
                                  SampleType::inuse_objects, SampleType::inuse_space};
    if (profile.from_log) {
        types.insert(types.end(), std::begin(log_sample_types), std::end(log_sample_types));
    }
    for (SampleType type : types) {
        int64_t total = 0;
        for (const Sample& sample : profile.samples) {
            if (__builtin_add_overflow(total, value_of(profile, sample, type), &total)) {
                std::string_view source = sample.dump < profile.sources.size()
                                              ? std::string_view(profile.sources[sample.dump])
                                              : std::string_view("the input");
                return fail("{}: the samples' {} add up to more than 2^63-1, more than a "
                            "profile can hold (pprof's values are signed 64-bit): a damaged "
                            "dump?",
                            source, name_of(type));
            }
        }
    }
    return {};
}

} // namespace heapkit
