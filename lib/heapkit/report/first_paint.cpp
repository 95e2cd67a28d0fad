// SPDX-License-Identifier: MIT
#include "heapkit/report/first_paint.hpp"

#include "heapkit/emit/quantity.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace heapkit {
namespace {

// Per function (string id): its flat, its cum, and whether it has a row (some node of it
// not 0), summed over the prefix tree walked depth first: a node's total (its stacks'
// and its callees') is complete when the walk leaves it, and counts in its function's
// cum when no caller above it is the same function (recursion counted once), as
// report_top.js counts the outermost nodes.
struct Sums {
    std::vector<int64_t> flat;
    std::vector<int64_t> cum;
    std::vector<bool> listed;
    int64_t total = 0;
};

Sums function_sums(std::span<const int32_t> parents, std::span<const uint32_t> names,
                   std::span<const uint32_t> leaves, std::span<const int64_t> values,
                   size_t string_count) {
    size_t count = parents.size();
    Sums sums{std::vector<int64_t>(string_count), std::vector<int64_t>(string_count),
              std::vector<bool>(string_count)};
    std::vector<int64_t> total(count); // its own stacks' first, its callees' added on leaving
    for (size_t l = 0; l < leaves.size() && l < values.size(); ++l) {
        total[leaves[l]] += values[l];
        sums.flat[names[leaves[l]]] += values[l];
        sums.total += values[l];
    }
    std::vector<uint32_t> first(count + 2); // node n's children: [first[n + 1], first[n + 2])
    for (int32_t parent : parents) {
        ++first[static_cast<size_t>(parent + 2)];
    }
    for (size_t n = 1; n < first.size(); ++n) {
        first[n] += first[n - 1];
    }
    std::vector<uint32_t> kids(count);
    for (size_t n = 0; n < count; ++n) {
        kids[first[static_cast<size_t>(parents[n] + 1)]++] = static_cast<uint32_t>(n);
    }
    // (filling moved each list's start to the next one's: node n's children now end at
    // first[n + 1] and start at first[n])
    std::vector<uint32_t> on_path(string_count);     // each name's nodes on the way down
    std::vector<std::pair<uint32_t, uint32_t>> walk; // (node, its next child)
    auto enter = [&](uint32_t n) {
        ++on_path[names[n]];
        walk.emplace_back(n, first[n]);
    };
    for (uint32_t root = 0; root < first[0]; ++root) {
        enter(kids[root]);
        while (!walk.empty()) {
            auto [node, next] = walk.back();
            if (next < first[node + 1]) {
                ++walk.back().second;
                enter(kids[next]);
                continue;
            }
            walk.pop_back();
            uint32_t name = names[node];
            if (--on_path[name] == 0) {
                sums.cum[name] += total[node];
            }
            sums.listed[name] = sums.listed[name] || total[node] != 0;
            if (parents[node] >= 0) {
                total[static_cast<size_t>(parents[node])] += total[node];
            }
        }
    }
    return sums;
}

// percentText (emit/js/amount.js): "12.50%", a share without its sign, of nothing 0.
std::string percent_text(int64_t part, int64_t total) {
    double share =
        total == 0 ? 0 : std::fabs(100 * static_cast<double>(part) / static_cast<double>(total));
    return fmt::format("{:.2f}%", share);
}

} // namespace

TopTable top_rows(std::span<const int32_t> parents, std::span<const uint32_t> names,
                  std::span<const uint32_t> leaves, std::span<const int64_t> values,
                  std::span<const std::string* const> strings, size_t shown) {
    TopTable table;
    Sums sums = function_sums(parents, names, leaves, values, strings.size());
    table.total = sums.total;
    for (uint32_t s = 0; s < strings.size(); ++s) {
        if (sums.listed[s]) {
            table.rows.push_back(TopRow{s, sums.flat[s], sums.cum[s]});
        }
    }
    table.functions = table.rows.size();
    auto before = [&](const TopRow& a, const TopRow& b) {
        if (std::abs(a.flat) != std::abs(b.flat)) {
            return std::abs(a.flat) > std::abs(b.flat);
        }
        if (std::abs(a.cum) != std::abs(b.cum)) {
            return std::abs(a.cum) > std::abs(b.cum);
        }
        return *strings[a.name] < *strings[b.name];
    };
    size_t kept = std::min(shown, table.rows.size());
    std::partial_sort(table.rows.begin(), table.rows.begin() + static_cast<ptrdiff_t>(kept),
                      table.rows.end(), before);
    table.rows.resize(kept);
    return table;
}

void append_html_text(std::string& out, std::string_view text) {
    for (char c : text) {
        switch (c) {
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out.push_back(c);
        }
    }
}

FirstPaint first_paint(const TopTable& table, std::span<const std::string* const> strings,
                       std::string_view type_name, bool bytes) {
    FirstPaint page;
    append_html_text(page.total, type_name);
    page.total += ": " + quantity(table.total, bytes) + " total";
    // topHead(false), sorted by flat, down.
    page.top_head = "<tr><th data-sort=\"flat\" class=\"\">flat \u25bc</th>"
                    "<th data-sort=\"flatp\" class=\"\">flat%</th>"
                    "<th data-sort=\"sump\" class=\"\">sum%</th>"
                    "<th data-sort=\"cum\" class=\"\">cum</th>"
                    "<th data-sort=\"cump\" class=\"\">cum%</th>"
                    "<th data-sort=\"name\" class=\"name\">function</th></tr>";
    int64_t sum = 0;
    auto out = std::back_inserter(page.top_rows);
    for (const TopRow& row : table.rows) {
        sum += row.flat;
        fmt::format_to(out,
                       "<tr data-function=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                       "<td>{}</td><td class=\"name\">",
                       row.name, quantity(row.flat, bytes), percent_text(row.flat, table.total),
                       percent_text(sum, table.total), quantity(row.cum, bytes),
                       percent_text(row.cum, table.total));
        append_html_text(page.top_rows, *strings[row.name]);
        page.top_rows += "</td></tr>\n";
    }
    page.top_note = table.functions > table.rows.size()
                        ? fmt::format("{} of {} functions shown: search to find the others",
                                      table.rows.size(), table.functions)
                        : fmt::format("{} functions", table.functions);
    return page;
}

} // namespace heapkit
