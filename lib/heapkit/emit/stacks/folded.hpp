// SPDX-License-Identifier: MIT
// A profile's stacks as every view spells them, handed over one at a time as values, not
// as text: the folded writers print them, the flame graph, the table and the growth
// ranking read them.
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"

#include <cstdint>
#include <functional>
#include <string_view>

namespace heapkit {

// One stack of a view, and its value (two in a change).
struct FoldedStack {
    // Its frames' texts, root first, joined by ';' (no frame text holds one). Valid only
    // during the call it is handed to.
    std::string_view frames;
    int64_t value = 0;  // the profile's; in a change, the after profile's
    int64_t before = 0; // in a change, the before profile's; else 0
};

using StackSink = std::function<Result<void>(const FoldedStack&)>;

// The profile's stacks spelled as `options` say, allocator frames cut, identical stacks
// summed, zero totals left out: each once, in bytewise order of `frames`. The first error
// `sink` returns stops it.
Result<void> fold_stacks(const Profile& profile, const FoldedOptions& options,
                         const StackSink& sink);

// The stacks of both profiles, met by their spelled frames (so that dumps of two runs,
// at other addresses, compare), each once with both values (0 where a side lacks it), in
// bytewise order of `frames`.
Result<void> fold_stack_changes(const Profile& before, const Profile& after,
                                const FoldedOptions& options, const StackSink& sink);

} // namespace heapkit
