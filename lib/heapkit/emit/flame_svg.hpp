// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/flame_colors.hpp"
#include "heapkit/emit/flame_graph.hpp"
#include "heapkit/emit/folded_writer.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace heapkit {

// Frames narrower than this are left out of the drawing (their parent's box still holds
// their share): in pixels, or in percent of the total.
struct MinWidth {
    double value = 0.1;
    bool percent = false;
};

// "0.1" (pixels) or "0.5%"; nullopt for anything else, negatives included.
std::optional<MinWidth> parse_min_width(std::string_view text);

// How a flame graph is drawn. The names are flamegraph.pl's options.
struct FlameOptions {
    std::string title;     // "" for "Flame Graph" ("Icicle Graph" when inverted)
    unsigned width = 1200; // of the image, pixels; at least min_width
    MinWidth minwidth;
    // The unit in each frame's title; "" for "bytes" (for a profile: "bytes" or
    // "objects", as its sample type counts).
    std::string countname;
    Palette colors = Palette::mem;
    bool inverted = false; // icicle graph: the root at the top
    // How folded text is read (flame_input()): stacks merged from the leaf; lines with
    // two counts, "stack before after"; lines sorted bytewise, as write_folded writes
    // them, so that frames too narrow to draw are dropped while reading.
    bool reverse = false;
    bool differential = false;
    bool sorted = false;

    static constexpr unsigned min_width = 100;
};

// Writes `graph` as a standalone SVG flame graph (script and style inside, no network
// needed), in pieces of about a megabyte to `sink`; the first error it returns stops the
// writing and is returned.
//
// It reads as flamegraph.pl's does, for the tools that read those: a root frame "all";
// inside <g id="frames">, one <g> per frame holding a <title> "NAME (N UNIT, P%)" (with
// "; +D%" added in a differential graph, D being the change of the stacks that end in
// the frame, in percent of the total), a <rect> and a <text>; N with thousands
// separators, P and D with two decimals. Frames narrower than options.minwidth are left
// out; the rest are written in the tree's preorder, children sorted by name, left-aligned
// in their parent. Colours come from a hash of the name (deterministic), or in a
// differential graph from the change: red grew, blue shrank.
Result<void> write_flame_svg(const FlameGraph& graph, const FlameOptions& options,
                             const FoldedSink& sink);

FlameInput flame_input(const FlameOptions& options);

// Draws the folded text that `produce` writes to the sink it is given (in pieces, never
// held whole), read as `options` say, with write_flame_svg().
using FoldedProducer = std::function<Result<void>(const FoldedSink&)>;
Result<void> write_flame_graph(const FoldedProducer& produce, const FlameOptions& options,
                               const FoldedSink& sink);

// The profile's collapsed stacks, as write_folded() makes them with `folded`, drawn so
// (they come sorted).
Result<void> write_flame_graph(const Profile& profile, const FoldedOptions& folded,
                               FlameOptions options, const FoldedSink& sink);

} // namespace heapkit
