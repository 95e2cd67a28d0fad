// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/address_index_builder.hpp"

#include "heapkit/symbolize/frame_strings.hpp"
#include "heapkit/symbolize/index/address_index.hpp"

#include <algorithm>

namespace heapkit {
namespace {

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
    // Whatever happens, `file` keeps no frames viewing `pool` once it is gone.
    struct Forget {
        const ElfModule& file;
        ~Forget() { file.forget_answers(); }
    } forget{file};
    AddressIndexWriter writer(build_id, file.has_dwarf());
    uint64_t end = 0;
    for (const auto& [start, extent_end] : extents) {
        if (start < end) {
            continue; // overlapping segments (damaged headers): the first one counts
        }
        if (start > end && end != 0) {
            writer.add(end, {}); // a gap between segments
        }
        auto first = std::lower_bound(bounds.begin(), bounds.end(), start);
        auto scope = scopes.begin(); // the first scope not wholly below *bound
        for (auto bound = first; bound != bounds.end() && *bound < extent_end; ++bound) {
            while (scope != scopes.end() && scope->second <= *bound) {
                ++scope;
            }
            bool in_scope = scope != scopes.end() && scope->first <= *bound;
            writer.add(*bound, file.frames_for_index(*bound, strings, in_scope));
        }
        end = extent_end;
    }
    return writer.finish(end);
}

} // namespace heapkit
