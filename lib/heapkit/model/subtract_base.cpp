// SPDX-License-Identifier: MIT
// subtract_base (model/profile.hpp): a profile less another, for --base views and pprof diffs.
#include "heapkit/model/profile.hpp"
#include "heapkit/util/try.hpp"

#include <span>
#include <unordered_map>

namespace heapkit {
namespace {

HeapValues negated(const HeapValues& values) {
    return {-values.alloc_objects, -values.alloc_space, -values.inuse_objects, -values.inuse_space};
}

// `base`'s frame texts live in its own pool: copied into `strings`, which `profile` keeps.
std::vector<Frame> frames_in(StringPool& strings, std::span<const Frame> frames) {
    std::vector<Frame> copied(frames.begin(), frames.end());
    for (Frame& frame : copied) {
        frame.name = strings.intern(frame.name);
        frame.system_name = strings.intern(frame.system_name);
        frame.file = strings.intern(frame.file);
    }
    return copied;
}

// Base thread label index -> the profile's index of the same text, added when new.
std::vector<int32_t> merge_thread_labels(Profile& profile, const Profile& base) {
    std::unordered_map<std::string, int32_t> known;
    for (size_t t = 0; t < profile.thread_labels.size(); ++t) {
        known.emplace(profile.thread_labels[t], static_cast<int32_t>(t));
    }
    std::vector<int32_t> index;
    for (const std::string& label : base.thread_labels) {
        auto [it, added] = known.emplace(label, static_cast<int32_t>(profile.thread_labels.size()));
        if (added) {
            profile.thread_labels.push_back(label);
        }
        index.push_back(it->second);
    }
    return index;
}

} // namespace

Result<void> subtract_base(Profile& profile, const Profile& base) {
    return catching([&]() -> Result<void> {
        auto module_offset = static_cast<uint32_t>(profile.modules.size());
        auto location_offset = static_cast<uint32_t>(profile.locations.size());
        profile.modules.insert(profile.modules.end(), base.modules.begin(), base.modules.end());
        for (const Location& location : base.locations) {
            Location copy{location.address, frames_in(*profile.strings, location.frames),
                          location.module};
            if (copy.module != no_module) {
                copy.module += module_offset;
            }
            profile.locations.push_back(std::move(copy));
        }
        std::vector<int32_t> threads = merge_thread_labels(profile, base);
        auto dump_offset = static_cast<uint32_t>(profile.sources.size());
        std::vector<uint32_t> ids;
        for (const Sample& sample : base.samples) {
            ids.clear();
            for (uint32_t location : base.locations_of(sample)) {
                ids.push_back(location + location_offset);
            }
            int32_t thread = sample.thread < 0 ? -1 : threads[static_cast<size_t>(sample.thread)];
            profile.add_sample(ids, negated(sample.values), thread, sample.dump + dump_offset);
        }
        for (const std::string& source : base.sources) {
            profile.sources.push_back("base " + source);
        }
        profile.has_accum = profile.has_accum && base.has_accum;
        return {};
    });
}

} // namespace heapkit
