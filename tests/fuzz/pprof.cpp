// SPDX-License-Identifier: MIT
// Any bytes as an (inflated) pprof profile, and when they read, through the model and the
// views that hold its every sample type: folded stacks, the table, pprof again; and named
// in place (every unnamed location given a frame), which must read again as the same
// profile with more lines.
#include "heapkit/emit/pprof_names.hpp"
#include "heapkit/emit/pprof_writer.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/model/pprof_profile.hpp"
#include "heapkit/read/pprof_reader.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    (void)heapkit::looks_like_pprof(bytes);
    auto file = heapkit::read_pprof(bytes, "fuzz");
    if (!file) {
        return 0;
    }
    auto profile = heapkit::profile_of_pprof(*file, "fuzz");
    if (!profile) {
        return 0;
    }
    // Every sample refers to a location the model holds.
    for (const heapkit::Sample& sample : profile->samples) {
        for (uint32_t location : profile->locations_of(sample)) {
            if (location >= profile->locations.size()) {
                __builtin_trap();
            }
        }
    }
    heapkit::Profile named = *profile;
    for (heapkit::Location& location : named.locations) {
        if (location.frames.empty()) {
            location.frames.push_back({"f", "_Z1fv", "f.c", 7, 0, 3});
        }
    }
    auto renamed = heapkit::add_pprof_names(bytes, *file, named);
    if (renamed) {
        auto again = heapkit::read_pprof(*renamed, "fuzz, named");
        if (!again || again->samples.size() != file->samples.size() ||
            again->locations.size() != file->locations.size() ||
            again->strings.size() < file->strings.size()) {
            __builtin_trap();
        }
    }
    if (!heapkit::check_totals(*profile)) {
        return 0; // values that overflow are refused before any view
    }
    auto sink = [](std::string_view) -> heapkit::Result<void> { return {}; };
    for (size_t slot = 0; slot < profile->named_types.size(); ++slot) {
        if (profile->named_types[slot].name.empty()) {
            continue;
        }
        heapkit::FoldedOptions folded;
        folded.sample = static_cast<heapkit::SampleType>(slot);
        folded.frames.keep_allocator_frames = slot % 2 == 0;
        (void)heapkit::write_folded(*profile, folded, sink);
        (void)heapkit::write_text_report(*profile, folded, {}, sink);
        heapkit::PprofOptions pprof;
        pprof.default_type = folded.sample;
        (void)heapkit::encode_pprof(*profile, pprof);
    }
    return 0;
}
