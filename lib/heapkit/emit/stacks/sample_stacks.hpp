// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/model/profile.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// Which of write_folded's lines each sample of a profile goes into.
struct SampleStacks {
    static constexpr uint32_t none = UINT32_MAX;

    std::vector<std::string> stacks;       // distinct, as write_folded spells them
    std::vector<uint32_t> stack_of_sample; // per Profile::samples: index into `stacks`, or
                                           // none (a value of 0, or no frame left)
};

// Each sample's stack spelled as write_folded(profile, options) spells its line, for
// what has to go back from lines to samples (a value per line shared among its samples).
Result<SampleStacks> spell_sample_stacks(const Profile& profile, const FoldedOptions& options);

// The last frame of a spelled stack (the allocation site, allocator frames cut).
inline std::string_view leaf_of(std::string_view stack) {
    size_t semicolon = stack.rfind(';');
    return semicolon == std::string_view::npos ? stack : stack.substr(semicolon + 1);
}

} // namespace heapkit
