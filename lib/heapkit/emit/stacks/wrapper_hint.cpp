// SPDX-License-Identifier: MIT
// find_wrapper_hints (emit/writers.hpp): a program's own allocation wrapper that the allocator
// list does not know shows as the leaf of most stacks, or, stripped, as an address that
// many callers reach just above malloc.
#include "heapkit/emit/stacks/allocator_frames.hpp"
#include "heapkit/emit/stacks/sample_stacks.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/util/regex.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>

namespace heapkit {
namespace {

// An unnamed leaf reached from this many distinct callers, under this share of the value,
// is hinted whatever its share: blender's MEM_lockfree_mallocN (29.9 %, 51 callers) and
// callocN (11.5 %, 56) had no name to be recognised by and each held less than half.
constexpr size_t unnamed_wrapper_callers = 8;
constexpr double unnamed_wrapper_share = 0.02;

struct Leaf {
    int64_t value = 0;
    std::set<std::string_view> callers;
    uint32_t sample = 0; // one of its samples
};

// Whether `sample`'s printed leaf is a function without a name (a stripped program's,
// shown by its module and start) whose callees in the stack are all cut as the
// allocator's: a function that calls malloc.
bool unnamed_above_allocator(const Profile& profile, const Sample& sample,
                             AllocatorFrameMatcher& allocator) {
    std::span<const uint32_t> locations = profile.locations_of(sample);
    for (size_t l = allocator_module_prefix(profile, locations); l < locations.size(); ++l) {
        const Location& location = profile.locations[locations[l]];
        bool cut = std::any_of(location.frames.begin(), location.frames.end(),
                               [&](const Frame& frame) { return allocator.matches(frame.name); });
        if (!cut) {
            return l > 0 && (location.anonymous || location.frames.empty());
        }
    }
    return false;
}

} // namespace

Result<std::vector<WrapperHint>> find_wrapper_hints(const Profile& profile,
                                                    const FoldedOptions& options) {
    HEAPKIT_TRY_ASSIGN(SampleStacks spelled, spell_sample_stacks(profile, options));
    std::vector<int64_t> value_of_stack(spelled.stacks.size(), 0);
    std::vector<uint32_t> sample_of_stack(spelled.stacks.size(), 0);
    int64_t total = 0;
    for (size_t s = 0; s < profile.samples.size(); ++s) {
        uint32_t stack = spelled.stack_of_sample[s];
        int64_t value = std::llabs(value_of(profile, profile.samples[s], options.sample));
        if (stack != SampleStacks::none) {
            value_of_stack[stack] += value;
            sample_of_stack[stack] = static_cast<uint32_t>(s);
            total += value;
        }
    }
    std::map<std::string_view, Leaf> leaves;
    for (size_t i = 0; i < spelled.stacks.size(); ++i) {
        std::string_view stack = spelled.stacks[i];
        size_t cut = stack.rfind(';');
        std::string_view leaf = cut == std::string_view::npos ? stack : stack.substr(cut + 1);
        Leaf& entry = leaves[leaf];
        entry.value += value_of_stack[i];
        entry.sample = sample_of_stack[i];
        if (cut != std::string_view::npos) {
            std::string_view above = stack.substr(0, cut);
            entry.callers.insert(above.substr(above.rfind(';') + 1)); // npos + 1 == 0
        }
    }
    AllocatorFrameMatcher allocator(
        drop_frames_regex(options.frames.keep_allocator_frames, options.frames.drop_frames));
    std::vector<WrapperHint> hints;
    for (const auto& [leaf, entry] : leaves) {
        double share =
            total > 0 ? static_cast<double>(entry.value) / static_cast<double>(total) : 0;
        // More than half of the total (total / 2 exactly so for a positive total), without
        // doubling a value that may be near the 64-bit limit.
        bool most = total > 0 && entry.value > total / 2 && entry.callers.size() >= 2;
        bool unnamed = !most && entry.callers.size() >= unnamed_wrapper_callers &&
                       share >= unnamed_wrapper_share &&
                       unnamed_above_allocator(profile, profile.samples[entry.sample], allocator);
        if (most || unnamed) {
            // The function's name: what --frame function+line adds after it left out.
            std::string_view function = leaf.substr(0, leaf.find(" ("));
            hints.push_back(WrapperHint{std::string(leaf), regex_literal(function), share,
                                        entry.callers.size(), unnamed});
        }
    }
    std::sort(hints.begin(), hints.end(),
              [](const WrapperHint& a, const WrapperHint& b) { return a.share > b.share; });
    return hints;
}

} // namespace heapkit
