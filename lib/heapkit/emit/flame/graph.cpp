// SPDX-License-Identifier: MIT
// write_flame_graph (heapkit.hpp): a profile's stacks, or folded text, drawn.
#include "heapkit/emit/flame/graph.hpp"

#include "heapkit/emit/flame/svg.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/util/try.hpp"

#include <fmt/format.h>

namespace heapkit {

FlameInput flame_input(const FlameOptions& options) {
    FlameInput input;
    input.differential = options.differential;
    input.reverse = options.reverse;
    input.sorted = options.sorted && !options.reverse; // reversed stacks are not
    // A hair below what write_flame_svg() draws, so that rounding never drops a frame it draws.
    input.prune_below = flame_min_share(options) * (1 - 1e-9);
    return input;
}

Result<void> write_flame_graph(const FoldedProducer& produce, const FlameOptions& options,
                               const Sink& sink) {
    HEAPKIT_TRY_ASSIGN(FlameGraph graph, build_flame_graph(produce, flame_input(options)));
    return write_flame_svg(graph, options, sink);
}

namespace {

Result<void> draw(const StackProducer& produce, const FlameOptions& options, const Sink& sink) {
    HEAPKIT_TRY_ASSIGN(FlameGraph graph, build_flame_graph(produce, flame_input(options)));
    return write_flame_svg(graph, options, sink);
}

// "bytes", "byte-seconds" or "objects", as the sample type counts, unless the user named
// the unit; and the sample type in the title unless the user gave one ("Flame Graph of
// temporary_space: …"): a picture of an allocation log's temporaries looked like one of
// what the program holds.
FlameOptions with_unit(FlameOptions options, const FoldedOptions& folded) {
    if (options.title.empty()) {
        options.title = fmt::format("{} of {}", options.inverted ? "Icicle Graph" : "Flame Graph",
                                    name_of(folded));
    }
    if (options.countname.empty()) {
        std::string_view unit = unit_of(folded);
        options.countname = unit == "bytes"          ? "bytes"
                            : unit == "byte_seconds" ? "byte-seconds"
                            : !folded.sample_name.empty()
                                ? (unit == "count" ? folded.sample_name : std::string(unit))
                                : "objects";
    }
    return options;
}

} // namespace

Result<void> write_flame_graph(const Profile& profile, const FoldedOptions& folded,
                               FlameOptions options, const Sink& sink) {
    options.sorted = true; // fold_stacks hands them over in bytewise order
    if (options.subtitle.empty()) {
        options.subtitle = fmt::format("{}", fmt::join(profile.notes, "; "));
    }
    auto produce = [&](const StackSink& stacks) { return fold_stacks(profile, folded, stacks); };
    return catching([&] { return draw(produce, with_unit(options, folded), sink); });
}

Result<void> write_flame_graph_diff(const Profile& before, const Profile& after,
                                    const FoldedOptions& folded, FlameOptions options,
                                    const Sink& sink) {
    options.differential = true;
    auto produce = [&](const StackSink& stacks) {
        return fold_stack_changes(before, after, folded, stacks);
    };
    return catching([&] { return draw(produce, with_unit(options, folded), sink); });
}

} // namespace heapkit
