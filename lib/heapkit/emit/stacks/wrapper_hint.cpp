// SPDX-License-Identifier: MIT
// find_wrapper_hint (emit/writers.hpp): a program's own allocation wrapper that the allocator
// list does not know shows as the leaf of most stacks.
#include "heapkit/emit/stacks/sample_stacks.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/util/try.hpp"

#include <cstdlib>
#include <map>
#include <set>
#include <string_view>

namespace heapkit {
namespace {

// `name` as a regex (RE2's syntax) matching exactly it.
std::string escaped(std::string_view name) {
    std::string regex;
    for (char c : name) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) {
            regex += '\\';
        }
        regex += c;
    }
    return regex;
}

struct Leaf {
    int64_t value = 0;
    std::set<std::string_view> callers;
};

} // namespace

Result<std::optional<WrapperHint>> find_wrapper_hint(const Profile& profile,
                                                     const FoldedOptions& options) {
    HEAPKIT_TRY_ASSIGN(SampleStacks spelled, spell_sample_stacks(profile, options));
    std::vector<int64_t> value_of_stack(spelled.stacks.size(), 0);
    int64_t total = 0;
    for (size_t s = 0; s < profile.samples.size(); ++s) {
        uint32_t stack = spelled.stack_of_sample[s];
        int64_t value = std::llabs(value_of(profile, profile.samples[s], options.sample));
        if (stack != SampleStacks::none) {
            value_of_stack[stack] += value;
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
        if (cut != std::string_view::npos) {
            std::string_view above = stack.substr(0, cut);
            entry.callers.insert(above.substr(above.rfind(';') + 1)); // npos + 1 == 0
        }
    }
    for (const auto& [leaf, entry] : leaves) {
        // More than half of the total (total / 2 exactly so for a positive total), without
        // doubling a value that may be near the 64-bit limit.
        if (total > 0 && entry.value > total / 2 && entry.callers.size() >= 2) {
            // The function's name: what --frame function+line adds after it left out.
            std::string_view function = leaf.substr(0, leaf.find(" ("));
            return WrapperHint{std::string(leaf), escaped(function),
                               static_cast<double>(entry.value) / static_cast<double>(total),
                               entry.callers.size()};
        }
    }
    return std::optional<WrapperHint>();
}

} // namespace heapkit
