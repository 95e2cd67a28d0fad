// SPDX-License-Identifier: MIT
// write_text_report (heapkit.hpp): jeprof --text / go tool pprof -top, from the flame
// graph of the profile's collapsed stacks (so every view shows the same frames).
#include "heapkit/emit/flame/svg.hpp"
#include "heapkit/emit/flame/tree.hpp"
#include "heapkit/emit/quantity.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <unordered_map>

namespace heapkit {
namespace {

struct Row {
    std::string_view name;
    int64_t flat = 0; // stacks ending in the function
    int64_t cum = 0;  // stacks through it, each counted once however often it recurs
};

// Per node: what ends there (flat) and what runs through it (cum). In a differential
// graph both are changes: after - before.
struct NodeValues {
    std::vector<int64_t> flat;
    std::vector<int64_t> cum;
};

NodeValues node_values(const FlameGraph& graph) {
    const auto& nodes = graph.nodes();
    NodeValues values{std::vector<int64_t>(nodes.size()), std::vector<int64_t>(nodes.size())};
    for (size_t n = 0; n < nodes.size(); ++n) {
        values.flat[n] =
            graph.differential() ? nodes[n].delta : static_cast<int64_t>(nodes[n].value);
    }
    if (graph.differential()) {
        values.cum = values.flat; // summed up from the leaves below: children follow parents
        for (size_t n = nodes.size(); n-- > 1;) {
            values.cum[nodes[n].parent] += values.cum[n];
        }
        return values;
    }
    for (size_t n = 0; n < nodes.size(); ++n) {
        values.cum[n] = static_cast<int64_t>(nodes[n].value);
    }
    for (size_t n = 1; n < nodes.size(); ++n) {
        values.flat[nodes[n].parent] -= values.cum[n];
    }
    return values;
}

// One row per function name: a depth-first walk keeps how often each name is on the
// path, so that a recursive function's cum counts each stack once.
std::vector<Row> rows_of(const FlameGraph& graph, const NodeValues& values) {
    const auto& nodes = graph.nodes();
    std::unordered_map<uint32_t, Row> rows;
    std::unordered_map<uint32_t, uint32_t> on_path;
    std::vector<std::pair<uint32_t, bool>> stack; // node, leaving
    for (uint32_t c = nodes[0].first_child; c != FlameNode::none; c = nodes[c].next_sibling) {
        stack.emplace_back(c, false);
    }
    while (!stack.empty()) {
        auto [n, leaving] = stack.back();
        stack.pop_back();
        uint32_t name = nodes[n].name;
        if (leaving) {
            --on_path[name];
            continue;
        }
        Row& row = rows[name];
        row.name = graph.name(name);
        row.flat += values.flat[n];
        if (on_path[name]++ == 0) {
            row.cum += values.cum[n];
        }
        stack.emplace_back(n, true);
        for (uint32_t c = nodes[n].first_child; c != FlameNode::none; c = nodes[c].next_sibling) {
            stack.emplace_back(c, false);
        }
    }
    std::vector<Row> sorted;
    for (auto& [id, row] : rows) {
        sorted.push_back(row);
    }
    // By flat (largest change first, in absolute value, for a diff), then cum, then name.
    std::sort(sorted.begin(), sorted.end(), [](const Row& a, const Row& b) {
        return std::tuple(-std::llabs(a.flat), -std::llabs(a.cum), a.name) <
               std::tuple(-std::llabs(b.flat), -std::llabs(b.cum), b.name);
    });
    return sorted;
}

Result<void> write_rows(const FlameGraph& graph, const FoldedOptions& folded,
                        const TextOptions& options, const Sink& sink) {
    NodeValues values = node_values(graph);
    std::vector<Row> rows = rows_of(graph, values);
    bool bytes = unit_of(folded) == "bytes";
    int64_t total = values.cum[0];
    // A change's percentages are of the base's total, as go tool pprof -diff_base gives
    // them: of the net change, a small net made -2423 % of a 28 kB shrink.
    int64_t base_total = static_cast<int64_t>(graph.total()) - total;
    int64_t of = graph.differential() ? base_total : total;
    size_t shown =
        options.node_count == 0 ? rows.size() : std::min(options.node_count, rows.size());
    std::string out =
        graph.differential()
            ? fmt::format("change of {}: {} total, percentages of the base's {}; {} of {} "
                          "functions shown{}{}\n",
                          name_of(folded), quantity(total, bytes), quantity(base_total, bytes),
                          shown, rows.size(), options.header_note.empty() ? "" : "; ",
                          options.header_note)
            : fmt::format("{}: {} total, {} of {} functions shown{}{}\n", name_of(folded),
                          quantity(total, bytes), shown, rows.size(),
                          options.header_note.empty() ? "" : "; ", options.header_note);
    out += fmt::format("{:>10} {:>7} {:>7} {:>10} {:>7}  {}\n", "flat", "flat%", "sum%", "cum",
                       "cum%", "function");
    int64_t sum = 0;
    for (size_t r = 0; r < shown; ++r) {
        sum += rows[r].flat;
        out +=
            fmt::format("{:>10} {:>7} {:>7} {:>10} {:>7}  {}\n", quantity(rows[r].flat, bytes),
                        share_percent(rows[r].flat, of), share_percent(sum, of),
                        quantity(rows[r].cum, bytes), share_percent(rows[r].cum, of), rows[r].name);
    }
    return sink(out);
}

Result<void> write_report(const StackProducer& produce, bool differential,
                          const FoldedOptions& folded, const TextOptions& options,
                          const Sink& sink) {
    FlameInput input;
    input.differential = differential;
    HEAPKIT_TRY_ASSIGN(FlameGraph graph, build_flame_graph(produce, input));
    return write_rows(graph, folded, options, sink);
}

} // namespace

Result<void> write_text_report(const Profile& profile, const FoldedOptions& folded,
                               const TextOptions& options, const Sink& sink) {
    auto produce = [&](const StackSink& stacks) { return fold_stacks(profile, folded, stacks); };
    return catching([&] { return write_report(produce, false, folded, options, sink); });
}

Result<void> write_text_report_diff(const Profile& before, const Profile& after,
                                    const FoldedOptions& folded, const TextOptions& options,
                                    const Sink& sink) {
    auto produce = [&](const StackSink& stacks) {
        return fold_stack_changes(before, after, folded, stacks);
    };
    return catching([&] { return write_report(produce, true, folded, options, sink); });
}

} // namespace heapkit
