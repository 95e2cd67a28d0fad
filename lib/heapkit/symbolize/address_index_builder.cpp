// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/address_index_builder.hpp"

#include "heapkit/symbolize/address_index.hpp"
#include "heapkit/symbolize/frame_strings.hpp"

#include <algorithm>

namespace heapkit {
namespace {

bool same_frames(const std::vector<Frame>& a, const std::vector<Frame>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Frame& x, const Frame& y) {
        return x.name == y.name && x.system_name == y.system_name && x.file == y.file &&
               x.line == y.line && x.column == y.column && x.start_line == y.start_line;
    });
}

// Appends a range unless it answers as the one before it does.
void append(std::vector<AnsweredRange>& ranges, uint64_t start, std::vector<Frame> frames) {
    if (!ranges.empty() && same_frames(ranges.back().frames, frames)) {
        return;
    }
    ranges.push_back({start, std::move(frames)});
}

using Extents = std::vector<std::pair<uint64_t, uint64_t>>;

// `extents` sorted and joined where they overlap or touch.
Extents joined(Extents extents) {
    std::sort(extents.begin(), extents.end());
    Extents out;
    for (const auto& [low, high] : extents) {
        if (!out.empty() && low <= out.back().second) {
            out.back().second = std::max(out.back().second, high);
        } else {
            out.emplace_back(low, high);
        }
    }
    return out;
}

} // namespace

std::string build_address_index(const ElfModule& file, const std::string& build_id) {
    std::vector<std::pair<uint64_t, uint64_t>> extents = file.code_extents();
    ElfModule::AnswerBounds answer_bounds = file.answer_bounds();
    std::vector<uint64_t>& bounds = answer_bounds.bounds;
    // Stretches outside every DWARF scope (padding between functions, code without
    // DWARF) are named by symbols alone: no DWARF walk for them.
    Extents scopes = joined(std::move(answer_bounds.dwarf_scopes));
    for (const auto& [start, end] : extents) {
        bounds.push_back(start);
        bounds.push_back(end);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());

    StringPool pool;
    FrameStrings strings(pool);
    std::vector<AnsweredRange> ranges;
    uint64_t end = 0;
    for (const auto& [start, extent_end] : extents) {
        if (start < end) {
            continue; // overlapping segments (damaged headers): the first one counts
        }
        if (start > end && !ranges.empty()) {
            append(ranges, end, {}); // a gap between segments
        }
        auto first = std::lower_bound(bounds.begin(), bounds.end(), start);
        auto scope = scopes.begin(); // the first scope not wholly below *bound
        for (auto bound = first; bound != bounds.end() && *bound < extent_end; ++bound) {
            while (scope != scopes.end() && scope->second <= *bound) {
                ++scope;
            }
            bool in_scope = scope != scopes.end() && scope->first <= *bound;
            append(ranges, *bound, file.frames_for_index(*bound, strings, in_scope));
        }
        end = extent_end;
    }
    std::string bytes = encode_address_index(build_id, file.has_dwarf(), ranges, end);
    file.forget_answers(); // its kept frames view `pool`
    return bytes;
}

} // namespace heapkit
