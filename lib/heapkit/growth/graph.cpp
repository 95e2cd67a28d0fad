// SPDX-License-Identifier: MIT
// write_growth_graph (heapkit.hpp): the suspects' chart above the last dump's flame graph
// coloured by growth, in one SVG document.
#include "heapkit/emit/flame/graph.hpp"

#include "heapkit/emit/flame/colors.hpp"
#include "heapkit/emit/flame/svg.hpp"
#include "heapkit/emit/flame/tree.hpp"
#include "heapkit/emit/quantity.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/growth/allocation_sites.hpp"
#include "heapkit/growth/chart.hpp"
#include "heapkit/growth/growth.hpp"
#include "heapkit/growth/stack_trends.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace heapkit {
namespace {

constexpr size_t default_lines = 10;

std::string rate(double value, bool bytes, bool timed) {
    return fmt::format("{}{}/{}", value > 0 ? "+" : "", quantity(value, bytes),
                       timed ? "s" : "dump");
}

ChartInput chart_input(const GrowthSeries& series, std::span<const StackTrend> top,
                       const std::vector<std::string>& sites, const FoldedOptions& folded) {
    ChartInput input;
    bool bytes = unit_of(folded) == "bytes";
    bool grows = !top.empty() && top.front().trend.persistent() > 0;
    input.title =
        grows ? fmt::format("{} over time: the {} that grow{}", name_of(folded),
                            top.size() == 1 ? "stack" : fmt::format("{} stacks", top.size()),
                            top.size() == 1 ? "s" : "")
              : fmt::format("{} over time: nothing grows{}; the {} largest stacks", name_of(folded),
                            step_count(series) > 0
                                ? fmt::format(" ({} grew and then stopped)", step_count(series))
                                : std::string(),
                            top.size());
    // Dumps written within one tick of the file clock share a time: drawn over seconds,
    // their values would stack up as vertical jumps. Then the axis counts dumps.
    bool apart =
        std::adjacent_find(series.seconds.begin(), series.seconds.end()) == series.seconds.end();
    input.seconds = series.timed && apart;
    input.bytes = bytes;
    for (size_t d = 0; d < series.dumps; ++d) {
        input.x.push_back(input.seconds ? series.seconds[d] : static_cast<double>(d + 1));
    }
    for (size_t s = 0; s < top.size(); ++s) {
        const Trend& trend = top[s].trend;
        input.lines.push_back(
            ChartLine{fmt::format("{}. {}", s + 1, sites[s]),
                      fmt::format("growth {}, R^2 {:.2f}, {} -> {}",
                                  rate(trend.persistent(), bytes, series.timed), trend.r_squared,
                                  quantity(top[s].first(), bytes), quantity(top[s].last(), bytes)),
                      top[s].values});
    }
    return input;
}

std::vector<std::string_view> frames_of(std::string_view stack, bool reverse) {
    std::vector<std::string_view> frames;
    while (true) {
        size_t semicolon = stack.find(';');
        frames.push_back(stack.substr(0, semicolon));
        if (semicolon == std::string_view::npos) {
            break;
        }
        stack.remove_prefix(semicolon + 1);
    }
    if (reverse) {
        std::reverse(frames.begin(), frames.end());
    }
    return frames;
}

// Each node's growth: the persistent growth of the stacks through it, summed. Stacks are
// found in the graph by walking their frames down from the root.
std::vector<double> growth_by_node(const FlameGraph& graph, const GrowthSeries& series,
                                   bool reverse) {
    const auto& nodes = graph.nodes();
    std::unordered_map<std::string_view, uint32_t> name_ids;
    std::unordered_map<uint64_t, uint32_t> children; // parent << 32 | name id -> node
    for (uint32_t n = 1; n < nodes.size(); ++n) {
        name_ids.emplace(graph.name(nodes[n]), nodes[n].name);
        children.emplace(uint64_t{nodes[n].parent} << 32 | nodes[n].name, n);
    }
    std::vector<double> growth(nodes.size(), 0);
    for (const StackTrend& stack : series.stacks) {
        uint32_t node = 0;
        for (std::string_view frame : frames_of(stack.stack, reverse)) {
            auto name = name_ids.find(frame);
            auto child = name == name_ids.end()
                             ? children.end()
                             : children.find(uint64_t{node} << 32 | name->second);
            node = child == children.end() ? 0 : child->second;
            if (node == 0) {
                break; // not in the last dump
            }
        }
        if (node != 0) {
            growth[node] += stack.trend.persistent();
        }
    }
    for (size_t n = nodes.size(); n-- > 1;) { // children come after their parents
        growth[nodes[n].parent] += growth[n];
    }
    return growth;
}

FlameDrawing coloured_by(const std::vector<double>& growth, bool bytes, bool timed) {
    double largest = 0;
    for (double g : growth) {
        largest = std::max(largest, std::fabs(g));
    }
    constexpr int64_t scale = 1000000;
    FlameDrawing drawing;
    drawing.fill = [&growth, largest](uint32_t node) {
        double share = largest == 0 ? 0 : growth[node] / largest;
        return change_color(std::llround(share * scale), scale);
    };
    drawing.note = [&growth, bytes, timed](uint32_t node) {
        return "growth " + rate(growth[node], bytes, timed);
    };
    return drawing;
}

Result<void> write_graph(std::span<const Profile> dumps, const FoldedOptions& folded,
                         const GrowthOptions& options, FlameOptions flame, const Sink& sink) {
    HEAPKIT_TRY_ASSIGN(GrowthSeries series, follow_stacks(dumps, folded));
    size_t wanted = options.node_count == 0 ? default_lines : options.node_count;
    // Only what grows is drawn (and so sets the scale): a flat 64 MB stack squeezed three
    // growing ones into the chart's bottom tenth.
    std::span<const StackTrend> top(series.stacks.data(), suspect_count(series, wanted));
    HEAPKIT_TRY_ASSIGN(std::vector<std::string> sites, allocation_sites(dumps, folded, top));
    Chart chart = growth_chart(chart_input(series, top, sites, folded), flame.width);

    bool bytes = unit_of(folded) == "bytes";
    if (flame.countname.empty()) {
        flame.countname = bytes ? "bytes" : "objects";
    }
    if (flame.title.empty()) {
        flame.title = "The last dump; frames coloured by growth (red grows, blue shrinks)";
    }
    if (flame.subtitle.empty() && !series.notes.empty()) {
        flame.subtitle = fmt::format("{}", fmt::join(series.notes, " "));
    }
    flame.differential = false;
    auto produce = [&](const StackSink& stacks) {
        return fold_stacks(dumps[series.last_dump], folded, stacks);
    };
    HEAPKIT_TRY_ASSIGN(FlameGraph graph, build_flame_graph(produce, flame_input(flame)));
    std::vector<double> growth = growth_by_node(graph, series, flame.reverse);
    FlameDrawing drawing = coloured_by(growth, bytes, series.timed);
    drawing.nested_at = chart.height;

    double height = chart.height + flame_svg_height(graph, flame);
    HEAPKIT_TRY(sink(fmt::format("<?xml version=\"1.0\" standalone=\"no\"?>\n"
                                 "<svg version=\"1.1\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 "
                                 "{0} {1}\" xmlns=\"http://www.w3.org/2000/svg\">\n",
                                 flame.width, height)));
    HEAPKIT_TRY(sink(chart.svg));
    HEAPKIT_TRY(write_flame_svg(graph, flame, sink, drawing));
    return sink("</svg>\n");
}

} // namespace

Result<void> write_growth_graph(std::span<const Profile> dumps, const FoldedOptions& folded,
                                const GrowthOptions& options, FlameOptions flame,
                                const Sink& sink) {
    return catching([&] { return write_graph(dumps, folded, options, flame, sink); });
}

} // namespace heapkit
