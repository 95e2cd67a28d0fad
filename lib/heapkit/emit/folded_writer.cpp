// SPDX-License-Identifier: MIT
#include "heapkit/emit/folded_writer.hpp"

#include "heapkit/emit/allocator_frames.hpp"
#include "heapkit/emit/frame_text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <unordered_map>

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

// Spells out one stack: root first, allocator frames cut as jeprof cuts them (the
// rootmost allocator frame and everything leafward of it), thread frame in front.
class AllocatorCut {
public:
    AllocatorCut(const Profile& profile, const std::vector<LocationTexts>& texts,
                 const FoldedOptions& options)
        : m_profile(profile)
        , m_texts(texts)
        , m_options(options) {}

    std::string line(std::span<const uint32_t> locations, int32_t thread) {
        m_frames.clear();
        m_allocator.clear();
        size_t in_allocator = allocator_module_prefix(m_profile, locations);
        for (size_t l = 0; l < locations.size(); ++l) {
            const LocationTexts& one = m_texts[locations[l]];
            for (size_t f = 0; f < one.texts.size(); ++f) {
                m_frames.push_back(&one.texts[f]);
                m_allocator.push_back(l < in_allocator || one.allocator[f]);
            }
        }
        size_t first_kept = 0;
        if (!m_options.keep_allocator_frames) {
            for (size_t f = m_frames.size(); f-- > 0;) {
                if (m_allocator[f]) {
                    first_kept = f + 1;
                    break;
                }
            }
        }
        std::string line;
        if (thread >= 0) {
            line = frame_label(m_profile.thread_labels[static_cast<size_t>(thread)]);
        }
        for (size_t f = m_frames.size(); f-- > first_kept;) {
            if (!line.empty()) {
                line += ';';
            }
            line += *m_frames[f];
        }
        return line;
    }

private:
    const Profile& m_profile;
    const std::vector<LocationTexts>& m_texts;
    const FoldedOptions& m_options;
    std::vector<const std::string*> m_frames; // leaf first, reused between stacks
    std::vector<bool> m_allocator;
};

// Samples with the same locations and thread print the same line: sum them first, so
// that each distinct stack is spelled out once.
struct StackKey {
    std::span<const uint32_t> locations;
    int32_t thread;
    bool operator==(const StackKey& other) const {
        return thread == other.thread && std::equal(locations.begin(), locations.end(),
                                                    other.locations.begin(), other.locations.end());
    }
};

struct StackKeyHash {
    size_t operator()(const StackKey& key) const {
        size_t hash = std::hash<int32_t>()(key.thread);
        for (uint32_t location : key.locations) {
            hash = hash * 1000003u ^ location;
        }
        return hash;
    }
};

int64_t saturating_add(int64_t a, int64_t b) {
    int64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
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
    std::unordered_map<StackKey, int64_t, StackKeyHash> by_locations;
    by_locations.reserve(profile.samples.size());
    for (const Sample& sample : profile.samples) {
        int64_t value = value_of(sample.values, options.sample);
        if (value != 0) {
            int32_t thread = options.thread_frames ? sample.thread : -1;
            int64_t& total = by_locations[StackKey{profile.locations_of(sample), thread}];
            total = saturating_add(total, value);
        }
    }
    std::vector<LocationTexts> texts = location_texts(profile, options);
    AllocatorCut cut(profile, texts, options);
    // Different location lists can still print alike (inline frames, cut allocator
    // frames, equal names): merge again by text.
    std::unordered_map<std::string, int64_t> by_text;
    by_text.reserve(by_locations.size());
    for (const auto& [key, value] : by_locations) {
        std::string line = cut.line(key.locations, key.thread);
        if (!line.empty()) {
            int64_t& total = by_text[std::move(line)];
            total = saturating_add(total, value);
        }
    }
    std::vector<std::pair<std::string_view, int64_t>> lines(by_text.begin(), by_text.end());
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (const auto& [stack, value] : lines) {
        if (value != 0) {
            out.append(stack);
            out += ' ';
            out += std::to_string(value);
            out += '\n';
        }
    }
    return out;
}

} // namespace heapkit
