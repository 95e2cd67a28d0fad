// SPDX-License-Identifier: MIT
#include "heapkit/emit/folded_writer.hpp"

#include "heapkit/emit/allocator_frames.hpp"
#include "heapkit/emit/frame_text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace heapkit {
namespace {

// flamegraph.pl splits frames on ';' and the count off the last space; a ';' inside a
// name would split it, so it is shown as ':'.
std::string frame_label(std::string_view text) {
    std::string label(text);
    std::replace(label.begin(), label.end(), ';', ':');
    return label;
}

// Per-location frame texts (innermost first) and whether each is an allocator frame.
struct LocationTexts {
    std::vector<std::string> texts;
    std::vector<bool> allocator;
};

std::vector<LocationTexts> location_texts(const Profile& profile) {
    AllocatorFrameMatcher matcher;
    std::vector<LocationTexts> all(profile.locations.size());
    for (size_t i = 0; i < profile.locations.size(); ++i) {
        const Location& location = profile.locations[i];
        if (location.frames.empty()) {
            all[i].texts.push_back(unnamed_location_text(profile, location));
            all[i].allocator.push_back(false);
            continue;
        }
        for (const Frame& frame : location.frames) {
            all[i].texts.push_back(frame_label(frame.name));
            all[i].allocator.push_back(matcher.matches(frame.name));
        }
    }
    return all;
}

} // namespace

std::string write_folded(const Profile& profile, const FoldedOptions& options) {
    std::vector<LocationTexts> texts = location_texts(profile);
    std::map<std::string, int64_t> stacks;
    std::vector<const std::string*> frames; // leaf first
    std::vector<bool> allocator;
    for (const Sample& sample : profile.samples) {
        int64_t value = value_of(sample.values, options.sample);
        if (value == 0) {
            continue;
        }
        frames.clear();
        allocator.clear();
        size_t in_allocator = allocator_module_prefix(profile, sample);
        for (size_t l = 0; l < sample.locations.size(); ++l) {
            const LocationTexts& one = texts[sample.locations[l]];
            for (size_t f = 0; f < one.texts.size(); ++f) {
                frames.push_back(&one.texts[f]);
                allocator.push_back(l < in_allocator || one.allocator[f]);
            }
        }
        size_t first_kept = 0;
        if (!options.keep_allocator_frames) {
            for (size_t f = frames.size(); f-- > 0;) {
                if (allocator[f]) {
                    first_kept = f + 1;
                    break;
                }
            }
        }
        std::string line;
        if (options.thread_frames && sample.thread >= 0) {
            line = frame_label(profile.thread_labels[static_cast<size_t>(sample.thread)]);
        }
        for (size_t f = frames.size(); f-- > first_kept;) {
            if (!line.empty()) {
                line += ';';
            }
            line += *frames[f];
        }
        if (line.empty()) {
            continue; // nothing but allocator frames
        }
        stacks[line] += value;
    }
    std::string out;
    for (const auto& [stack, value] : stacks) {
        if (value != 0) {
            fmt::format_to(std::back_inserter(out), "{} {}\n", stack, value);
        }
    }
    return out;
}

} // namespace heapkit
