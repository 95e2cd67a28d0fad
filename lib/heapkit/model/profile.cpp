// SPDX-License-Identifier: MIT
#include "heapkit/model/profile.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iterator>
#include <vector>

namespace heapkit {
namespace {

// A pprof's slot for `type`, when it fills one.
const NamedSampleType* named_slot(const Profile& profile, SampleType type) {
    auto slot = static_cast<size_t>(type);
    if (slot >= profile.named_types.size() || profile.named_types[slot].name.empty()) {
        return nullptr;
    }
    return &profile.named_types[slot];
}

std::string_view first_source(const Profile& profile) {
    return profile.sources.empty() ? std::string_view("the profile")
                                   : std::string_view(profile.sources.front());
}

// "name/unit, ..." of what a profile's samples measure.
std::string types_text(const Profile& profile) {
    std::vector<std::string> types;
    if (profile.named_types.empty()) {
        for (SampleType type : {SampleType::alloc_objects, SampleType::alloc_space,
                                SampleType::inuse_objects, SampleType::inuse_space}) {
            types.push_back(fmt::format("{}/{}", name_of(type), unit_of(type)));
        }
    }
    for (const NamedSampleType& type : profile.named_types) {
        if (!type.name.empty()) {
            types.push_back(fmt::format("{}/{}", type.name, type.unit));
        }
    }
    return fmt::format("{}", fmt::join(types, ", "));
}

} // namespace

std::string_view sample_name(const Profile& profile, SampleType type) {
    const NamedSampleType* named = named_slot(profile, type);
    return named != nullptr ? std::string_view(named->name) : name_of(type);
}

std::string_view sample_unit(const Profile& profile, SampleType type) {
    const NamedSampleType* named = named_slot(profile, type);
    return named != nullptr ? std::string_view(named->unit) : unit_of(type);
}

std::optional<SampleType> sample_type_named(const Profile& profile, std::string_view name) {
    if (profile.named_types.empty()) {
        return parse_sample_type(name);
    }
    for (size_t slot = 0; slot < profile.named_types.size(); ++slot) {
        if (profile.named_types[slot].name == name) {
            return static_cast<SampleType>(slot);
        }
    }
    return std::nullopt;
}

Result<SampleType> sample_type_of(const Profile& profile, std::string_view name) {
    if (auto type = sample_type_named(profile, name)) {
        return *type;
    }
    if (profile.named_types.empty()) {
        return fail("unknown sample type '{}': inuse_space, inuse_objects, alloc_space, "
                    "alloc_objects, temporary_objects, temporary_space, byte_seconds, "
                    "cross_thread_objects or cross_thread_space",
                    name);
    }
    return fail("{}: unknown sample type '{}': the profile has {}", first_source(profile), name,
                types_text(profile));
}

Result<void> check_same_types(const Profile& a, const Profile& b) {
    // Slot by slot: a dump's slots are the heap's four, so a pprof of a dump (heapkit's,
    // or go tool pprof's) compares with a dump. A slot a pprof leaves empty agrees with a
    // dump, or with a pprof that leaves it empty too; a filled one must name the same type
    // and unit on both sides.
    bool a_dump = a.named_types.empty();
    bool b_dump = b.named_types.empty();
    bool same = true;
    for (size_t slot = 0; slot < 4; ++slot) {
        auto type = static_cast<SampleType>(slot);
        bool in_a = a_dump || named_slot(a, type) != nullptr;
        bool in_b = b_dump || named_slot(b, type) != nullptr;
        if (!in_a || !in_b) {
            same = same && (in_a ? a_dump : in_b ? b_dump : true); // the side present is a dump
            continue;
        }
        same = same && sample_name(a, type) == sample_name(b, type) &&
               sample_unit(a, type) == sample_unit(b, type);
    }
    if (!same) {
        return fail("{} and {} measure different things: {} has {}; {} has {}", first_source(a),
                    first_source(b), first_source(a), types_text(a), first_source(b),
                    types_text(b));
    }
    return {};
}

Result<void> check_sample_type(const Profile& profile, SampleType type) {
    if (!profile.named_types.empty()) {
        if (named_slot(profile, type) == nullptr) {
            return fail("{}: unknown sample type '{}': the profile has {}", first_source(profile),
                        name_of(type), types_text(profile));
        }
        return {};
    }
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
