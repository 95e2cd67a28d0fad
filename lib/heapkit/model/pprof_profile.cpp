// SPDX-License-Identifier: MIT
#include "heapkit/model/pprof_profile.hpp"

#include "heapkit/util/try.hpp"

#include <algorithm>
#include <array>
#include <fmt/ranges.h>

namespace heapkit {
namespace {

constexpr size_t slot_count = 4; // HeapValues' four values

void set_value(HeapValues& values, size_t slot, int64_t value) {
    int64_t* slots[slot_count] = {&values.alloc_objects, &values.alloc_space, &values.inuse_objects,
                                  &values.inuse_space};
    *slots[slot] = value;
}

// Each sample type's slot (slot_count: left out): the heap's four names in their own
// slots, so that a heap profile is one as a dump's is; the others in the slots left, in
// order. Named in `profile`, with a note for the types left out.
std::vector<size_t> assign_slots(const PprofFile& file, Profile& profile) {
    std::vector<size_t> slots(file.sample_types.size(), slot_count);
    profile.named_types.assign(slot_count, {});
    auto take = [&](size_t t, size_t slot) {
        slots[t] = slot;
        profile.named_types[slot] = {file.strings[file.sample_types[t].type],
                                     file.strings[file.sample_types[t].unit]};
    };
    for (size_t t = 0; t < slots.size(); ++t) {
        auto heap = parse_sample_type(file.strings[file.sample_types[t].type]);
        if (heap && !is_log_type(*heap) &&
            profile.named_types[static_cast<size_t>(*heap)].name.empty()) {
            take(t, static_cast<size_t>(*heap));
        }
    }
    std::vector<std::string_view> left_out;
    for (size_t t = 0; t < slots.size(); ++t) {
        if (slots[t] != slot_count) {
            continue;
        }
        auto free = std::find_if(profile.named_types.begin(), profile.named_types.end(),
                                 [](const NamedSampleType& type) { return type.name.empty(); });
        if (free == profile.named_types.end()) {
            left_out.push_back(file.strings[file.sample_types[t].type]);
            continue;
        }
        take(t, static_cast<size_t>(free - profile.named_types.begin()));
    }
    if (!left_out.empty()) {
        profile.notes.push_back(fmt::format("sample types beyond the first four left out: {}",
                                            fmt::join(left_out, ", ")));
    }
    return slots;
}

// pprof's default_sample_type when it names one of the types kept, else the last kept.
std::optional<SampleType> default_of(const PprofFile& file, const std::vector<size_t>& slots) {
    std::optional<SampleType> chosen;
    for (size_t t = 0; t < slots.size(); ++t) {
        if (slots[t] == slot_count) {
            continue;
        }
        auto type = static_cast<SampleType>(slots[t]);
        if (file.default_sample_type != 0 &&
            file.sample_types[t].type == file.default_sample_type) {
            return type;
        }
        chosen = type;
    }
    return chosen;
}

void add_modules(const PprofFile& file, Profile& profile) {
    for (const PprofMapping& mapping : file.mappings) {
        Module module;
        module.path = file.strings[mapping.file];
        module.start = mapping.start;
        module.limit = mapping.limit;
        module.file_offset = mapping.file_offset;
        module.build_id = file.strings[mapping.build_id];
        module.is_main = profile.modules.empty(); // pprof's convention: the program first
        profile.modules.push_back(std::move(module));
    }
}

uint32_t clamped(int64_t line) {
    return static_cast<uint32_t>(std::clamp<int64_t>(line, 0, UINT32_MAX));
}

// A location's lines as frames; none when no line names a function (an address the
// symbolizer may name).
std::vector<Frame> frames_of(const PprofFile& file, const PprofLocation& location,
                             StringPool& strings) {
    std::vector<Frame> frames;
    for (const PprofLine& line : location.lines) {
        const PprofFunction& function = file.functions[line.function];
        std::string_view name = file.strings[function.name];
        std::string_view system_name = file.strings[function.system_name];
        if (name.empty() && system_name.empty()) {
            continue;
        }
        frames.push_back(Frame{strings.intern(name.empty() ? system_name : name),
                               strings.intern(system_name.empty() ? name : system_name),
                               strings.intern(file.strings[function.file]), clamped(line.line),
                               clamped(line.column), clamped(function.start_line)});
    }
    return frames;
}

void add_locations(const PprofFile& file, Profile& profile) {
    profile.locations.reserve(file.locations.size());
    for (const PprofLocation& location : file.locations) {
        Location kept;
        kept.address = location.address;
        kept.module = location.mapping == pprof_none ? no_module : location.mapping;
        kept.frames = frames_of(file, location, *profile.strings);
        profile.locations.push_back(std::move(kept));
    }
}

void add_samples(const PprofFile& file, const std::vector<size_t>& slots, Profile& profile) {
    for (size_t s = 0; s < file.samples.size(); ++s) {
        std::span<const int64_t> given = file.samples.values(s);
        HeapValues values;
        for (size_t t = 0; t < slots.size(); ++t) {
            if (slots[t] != slot_count) {
                set_value(values, slots[t], given[t]);
            }
        }
        profile.add_sample(file.samples.locations(s), values);
    }
}

} // namespace

Result<Profile> profile_of_pprof(const PprofFile& file, const std::string& source) {
    Profile profile;
    profile.sources = {source};
    profile.period = file.period > 0 ? static_cast<uint64_t>(file.period) : 1;
    profile.time_nanos = file.time_nanos;
    profile.duration_nanos = file.duration_nanos;
    std::vector<size_t> slots = assign_slots(file, profile);
    profile.default_type = default_of(file, slots);
    profile.has_accum =
        !profile.named_types[0].name.empty() || !profile.named_types[1].name.empty();
    add_modules(file, profile);
    add_locations(file, profile);
    add_samples(file, slots, profile);
    return profile;
}

} // namespace heapkit
