// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/flame/colors.hpp"
#include "heapkit/emit/flame/tree.hpp"
#include "heapkit/emit/options.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"
#include "heapkit/util/sink.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace heapkit {

// What a caller changes in how write_flame_svg draws a graph.
struct FlameDrawing {
    // A frame's fill by its node index (instead of the palette's, or the change's).
    std::function<Rgb(uint32_t node)> fill;
    // Text added to a frame's title after its percentage, "; " first: "NAME (N UNIT, P%;
    // NOTE)". Plain text (escaped here).
    std::function<std::string(uint32_t node)> note;
    // Drawn as an <svg> element at this height inside another SVG document (no XML
    // declaration; the caller writes the document around it).
    std::optional<double> nested_at;
};

// The height in pixels of write_flame_svg's drawing of `graph`.
double flame_svg_height(const FlameGraph& graph, const FlameOptions& options);

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
Result<void> write_flame_svg(const FlameGraph& graph, const FlameOptions& options, const Sink& sink,
                             const FlameDrawing& drawing = {});

// The share of the total below which write_flame_svg() draws no frame (options.minwidth).
double flame_min_share(const FlameOptions& options);

} // namespace heapkit
