// SPDX-License-Identifier: MIT
#include "heapkit/emit/folded_writer.hpp"

#include "heapkit/emit/allocator_frames.hpp"
#include "heapkit/emit/frame_text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
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

std::string_view base_name(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string frame_text(const Frame& frame, bool inlined, const FoldedOptions& options) {
    std::string text = frame_label(frame.name);
    if (options.style == FrameStyle::function_line && frame.line != 0 && !frame.file.empty()) {
        text += fmt::format(" ({}:{})", base_name(frame.file), frame.line);
    }
    if (inlined && options.annotate_inline) {
        text += "_[i]";
    }
    return text;
}

std::vector<LocationTexts> location_texts(const Profile& profile, const FoldedOptions& options) {
    AllocatorFrameMatcher matcher;
    std::vector<LocationTexts> all(profile.locations.size());
    for (size_t i = 0; i < profile.locations.size(); ++i) {
        const Location& location = profile.locations[i];
        LocationTexts& texts = all[i];
        if (location.frames.empty() || options.style == FrameStyle::address) {
            bool allocator = std::any_of(location.frames.begin(), location.frames.end(),
                                         [&](const Frame& f) { return matcher.matches(f.name); });
            texts.texts.push_back(location_address_text(profile, location));
            texts.allocator.push_back(allocator);
            continue;
        }
        // Every frame but the last is inlined into the next one.
        for (size_t f = 0; f < location.frames.size(); ++f) {
            const Frame& frame = location.frames[f];
            texts.texts.push_back(frame_text(frame, f + 1 < location.frames.size(), options));
            texts.allocator.push_back(matcher.matches(frame.name));
        }
    }
    return all;
}

} // namespace

std::optional<FrameStyle> parse_frame_style(std::string_view text) {
    if (text == "function") {
        return FrameStyle::function;
    }
    if (text == "function+line") {
        return FrameStyle::function_line;
    }
    if (text == "address") {
        return FrameStyle::address;
    }
    return std::nullopt;
}

std::string write_folded(const Profile& profile, const FoldedOptions& options) {
    std::vector<LocationTexts> texts = location_texts(profile, options);
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
        int64_t& total = stacks[line];
        if (__builtin_add_overflow(total, value, &total)) {
            total = std::numeric_limits<int64_t>::max(); // only hand-made dumps get here
        }
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
