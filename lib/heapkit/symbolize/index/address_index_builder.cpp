// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/address_index_builder.hpp"

#include "heapkit/symbolize/frame_strings.hpp"
#include "heapkit/symbolize/index/address_index.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

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

// `values` sorted, by 16-bit digits from the lowest (a radix sort), a pass skipped where
// every value has the same digit: a module's bounds (one per line-table row, millions in
// a big one) are addresses whose high digits rarely differ, and std::sort of them took a
// seventh of an index's CPU.
void sort_addresses(std::vector<uint64_t>& values) {
    constexpr unsigned digit_bits = 16;
    constexpr size_t digits = size_t{1} << digit_bits;
    std::vector<uint64_t> sorted(values.size());
    std::vector<size_t> counts(digits);
    for (unsigned shift = 0; shift < 64; shift += digit_bits) {
        std::fill(counts.begin(), counts.end(), 0);
        for (uint64_t value : values) {
            ++counts[(value >> shift) & (digits - 1)];
        }
        if (counts[(values.empty() ? 0 : values[0] >> shift) & (digits - 1)] == values.size()) {
            continue; // one digit for all: this pass keeps their order
        }
        size_t at = 0;
        for (size_t& count : counts) { // each digit's first place
            at += std::exchange(count, at);
        }
        for (uint64_t value : values) {
            sorted[counts[(value >> shift) & (digits - 1)]++] = value;
        }
        values.swap(sorted);
    }
}

} // namespace

std::string build_address_index(const ElfModule& file, const std::string& build_id,
                                FileAfter after) {
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
    sort_addresses(bounds);
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    // Repeats were most of it (a row's address is a scope's edge too): the room they took
    // is given to the answers made from here on.
    bounds.shrink_to_fit();

    StringPool pool;
    FrameStrings strings(pool);
    // Whatever happens, `file` keeps no frames viewing `pool` once it is gone.
    struct Forget {
        const ElfModule& file;
        ~Forget() { file.forget_answers(); }
    } forget{file};
    // The frames' texts live in `pool` until the end.
    AddressIndexWriter writer(build_id, file.has_dwarf(), AddressIndexWriter::Texts::pooled);
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
    // The DWARF answers' caches and the bounds (millions in a big module) go before the
    // file is put together: not both at once.
    file.forget_answers();
    if (after == FileAfter::closed) {
        file.close_file();
    }
    Extents().swap(scopes);
    std::vector<uint64_t>().swap(bounds);
    return writer.finish(end);
}

} // namespace heapkit
