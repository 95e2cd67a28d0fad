// SPDX-License-Identifier: MIT
// filter_stacks (model/profile.hpp): pprof's -focus and -ignore on a profile before any view.
#include "heapkit/model/address_text.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/regex.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <optional>

namespace heapkit {
namespace {

Result<std::optional<Regex>> compile(const std::string& pattern) {
    if (pattern.empty()) {
        return std::optional<Regex>();
    }
    HEAPKIT_TRY_ASSIGN(Regex compiled, Regex::compile(pattern));
    return std::optional<Regex>(std::move(compiled));
}

// Per location: whether what the views show of it holds a match of `regex`: one of its
// frames' names, or for a location without a name its address text.
std::vector<bool> matching_locations(const Profile& profile, const Regex& regex) {
    std::vector<bool> matches(profile.locations.size(), false);
    for (size_t l = 0; l < profile.locations.size(); ++l) {
        const Location& location = profile.locations[l];
        if (location.frames.empty()) {
            std::string text = location_address_text(profile, location);
            matches[l] = regex.search(text);
            continue;
        }
        for (const Frame& frame : location.frames) {
            if (regex.search(frame.name)) {
                matches[l] = true;
                break;
            }
        }
    }
    return matches;
}

bool any_of(const std::vector<bool>& matches) {
    return std::find(matches.begin(), matches.end(), true) != matches.end();
}

bool any_location(const Profile& profile, const Sample& sample, const std::vector<bool>& matches) {
    for (uint32_t location : profile.locations_of(sample)) {
        if (matches[location]) {
            return true;
        }
    }
    return false;
}

// pprof's -hide: the frames whose names match leave every location; a location left with
// no frame (or an unnamed one whose text matches) leaves every stack, so that a hidden
// frame's caller and callee become neighbours. True when anything matched.
bool hide_frames(Profile& profile, const Regex& regex) {
    std::vector<bool> gone(profile.locations.size(), false);
    bool matched = false;
    for (size_t l = 0; l < profile.locations.size(); ++l) {
        Location& location = profile.locations[l];
        if (location.frames.empty()) {
            std::string text = location_address_text(profile, location);
            gone[l] = regex.search(text);
            matched = matched || gone[l];
            continue;
        }
        size_t before = location.frames.size();
        erase_if(location.frames, [&](const Frame& frame) { return regex.search(frame.name); });
        matched = matched || location.frames.size() != before;
        gone[l] = location.frames.empty();
    }
    if (!std::count(gone.begin(), gone.end(), true)) {
        return matched;
    }
    // Samples may share a range of sample_locations: each gets its own, shortened one.
    PodVector<uint32_t> kept;
    for (Sample& sample : profile.samples) {
        size_t first = kept.size();
        for (uint32_t location : profile.locations_of(sample)) {
            if (!gone[location]) {
                kept.push_back(location);
            }
        }
        sample.first_location = first;
        sample.location_count = static_cast<uint32_t>(kept.size() - first);
    }
    profile.sample_locations = std::move(kept);
    return matched;
}

// pprof's -focus and -ignore: the samples left out go; the others keep their ranges.
FilterMatches focus_and_ignore(Profile& profile, const std::optional<Regex>& focus,
                               const std::optional<Regex>& ignore) {
    if (!focus && !ignore) {
        return FilterMatches{};
    }
    std::vector<bool> focused = focus ? matching_locations(profile, *focus) : std::vector<bool>();
    std::vector<bool> ignored = ignore ? matching_locations(profile, *ignore) : std::vector<bool>();
    FilterMatches matched{!focus || any_of(focused), !ignore || any_of(ignored)};
    size_t kept = 0;
    for (const Sample& sample : profile.samples) {
        if ((!focus || any_location(profile, sample, focused)) &&
            (!ignore || !any_location(profile, sample, ignored))) {
            profile.samples[kept++] = sample;
        }
    }
    profile.samples.resize(kept); // sample_locations stays: samples keep their ranges
    return matched;
}

} // namespace

Result<FilterMatches> filter_stacks(Profile& profile, const StackFilter& filter) {
    HEAPKIT_TRY_ASSIGN(auto focus, compile(filter.focus));
    HEAPKIT_TRY_ASSIGN(auto ignore, compile(filter.ignore));
    HEAPKIT_TRY_ASSIGN(auto hide, compile(filter.hide));
    if (!focus && !ignore && !hide) {
        return FilterMatches{};
    }
    return catching([&]() -> Result<FilterMatches> {
        FilterMatches matched = focus_and_ignore(profile, focus, ignore);
        if (hide) {
            matched.hide = hide_frames(profile, *hide);
        }
        return matched;
    });
}

} // namespace heapkit
