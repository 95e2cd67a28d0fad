// SPDX-License-Identifier: MIT
// Two profiles' stacks side by side: fold_stack_changes, and difffolded.pl's two-column
// lines made of them (write_folded_diff).
#include "heapkit/emit/stacks/folded.hpp"
#include "heapkit/emit/stacks/folded_text.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/util/try.hpp"

#include <optional>
#include <string>
#include <vector>

namespace heapkit {
namespace {

struct Kept {
    std::string frames;
    int64_t value;
};

// The before side is kept (fold_stacks hands over each stack once, in order), the after
// side met with it as it comes: both are in bytewise order, so one merge pass pairs them.
Result<void> merge_changes(const Profile& before, const Profile& after,
                           const FoldedOptions& options, const StackSink& sink) {
    std::vector<Kept> old_stacks;
    HEAPKIT_TRY(fold_stacks(before, options, [&](const FoldedStack& stack) {
        old_stacks.push_back({std::string(stack.frames), stack.value});
        return Result<void>{};
    }));
    size_t o = 0;
    // The before stacks up to `until` (all of them without it), which after lacks.
    auto flush_before = [&](std::optional<std::string_view> until) -> Result<void> {
        for (; o < old_stacks.size() && (!until || old_stacks[o].frames < *until); ++o) {
            HEAPKIT_TRY(sink(FoldedStack{old_stacks[o].frames, 0, old_stacks[o].value}));
        }
        return {};
    };
    HEAPKIT_TRY(fold_stacks(after, options, [&](const FoldedStack& stack) -> Result<void> {
        HEAPKIT_TRY(flush_before(stack.frames));
        int64_t was = 0;
        if (o < old_stacks.size() && old_stacks[o].frames == stack.frames) {
            was = old_stacks[o++].value;
        }
        return sink(FoldedStack{stack.frames, stack.value, was});
    }));
    return flush_before(std::nullopt);
}

} // namespace

Result<void> fold_stack_changes(const Profile& before, const Profile& after,
                                const FoldedOptions& options, const StackSink& sink) {
    return catching([&] { return merge_changes(before, after, options, sink); });
}

Result<void> write_folded_diff(const Profile& before, const Profile& after,
                               const FoldedOptions& options, const Sink& sink) {
    FoldedText text(sink);
    HEAPKIT_TRY(fold_stack_changes(before, after, options, [&](const FoldedStack& stack) {
        return text.add(stack.frames, {stack.before, stack.value});
    }));
    return text.finish();
}

} // namespace heapkit
