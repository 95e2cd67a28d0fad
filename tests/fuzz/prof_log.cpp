// SPDX-License-Identifier: MIT
// Any bytes as jemalloc's allocation log, and when they parse, through the profile (with a
// map that holds some addresses and misses others) and the log's table and folded views.
#include "heapkit/read/prof_log.hpp"

#include "heapkit/emit/writers.hpp"
#include "heapkit/model/log_profile.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto log = heapkit::parse_prof_log(text, "fuzz");
    if (!log) {
        return 0;
    }
    std::vector<heapkit::MapEntry> maps = {{0x1000, 0x100000, 0, true, false, "/fuzz/exe", 1}};
    for (bool by_free : {false, true}) {
        heapkit::Profile profile = heapkit::build_log_profile(*log, maps, {by_free, by_free});
        for (const heapkit::Sample& sample : profile.samples) {
            const heapkit::LogValues& values = profile.log_samples.at(sample.log).values;
            // Parts of what was allocated never exceed it (each sum is rounded once).
            if (values.temporary_objects > sample.values.alloc_objects ||
                values.cross_thread_space > sample.values.alloc_space || values.byte_seconds < 0) {
                __builtin_trap();
            }
        }
        heapkit::FoldedOptions folded;
        folded.sample = heapkit::SampleType::temporary_objects;
        auto sink = [](std::string_view) -> heapkit::Result<void> { return {}; };
        (void)heapkit::write_log_report(profile, folded, {}, sink);
        (void)heapkit::write_folded(profile, folded, sink);
    }
    return 0;
}
