// SPDX-License-Identifier: MIT
#include "heapkit/report/first_paint.hpp"

#include "heapkit/emit/quantity.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>

namespace heapkit {
namespace {

// Per function (string id): its flat, its cum, and whether it has a row, as report_top.js
// sums them over the tree (a function's cum: the totals of its nodes with no caller of
// the same function above them, so that recursion counts once). That is each stack's
// value once for each function on it: found walking up from each stack's leaf, a
// function met again on the same stack (recursion) stamped with the stack. A profile's
// values are not negative, so a function has a node not 0 (a row) when it is on a stack
// of a value not 0. The walks take as many steps as the stacks have frames, mostly
// through nodes made one after another, where a walk down their children would jump.
struct Sums {
    std::vector<int64_t> flat;
    std::vector<int64_t> cum;
    std::vector<bool> listed;
    int64_t total = 0;
};

Sums function_sums(std::span<const int32_t> parents, std::span<const uint32_t> names,
                   std::span<const uint32_t> leaves, std::span<const int64_t> values,
                   size_t string_count) {
    Sums sums{std::vector<int64_t>(string_count), std::vector<int64_t>(string_count),
              std::vector<bool>(string_count)};
    std::vector<uint32_t> stamp(string_count); // the last stack (leaf + 1) counted in
    for (size_t l = 0; l < leaves.size() && l < values.size(); ++l) {
        int64_t value = values[l];
        if (value == 0) {
            continue;
        }
        sums.flat[names[leaves[l]]] += value;
        sums.total += value;
        auto mark = static_cast<uint32_t>(l + 1);
        for (int32_t node = static_cast<int32_t>(leaves[l]); node >= 0;
             node = parents[static_cast<size_t>(node)]) {
            uint32_t name = names[static_cast<size_t>(node)];
            if (stamp[name] != mark) {
                stamp[name] = mark;
                sums.cum[name] += value;
                sums.listed[name] = true;
            }
        }
    }
    return sums;
}

} // namespace

TopTable top_rows(std::span<const int32_t> parents, std::span<const uint32_t> names,
                  std::span<const uint32_t> leaves, std::span<const int64_t> values,
                  const FlameNames& strings, size_t shown) {
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
        return strings[a.name] < strings[b.name];
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

FirstPaint first_paint(const TopTable& table, const FlameNames& strings, std::string_view type_name,
                       bool bytes) {
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
                       row.name, quantity(row.flat, bytes), share_percent(row.flat, table.total),
                       share_percent(sum, table.total), quantity(row.cum, bytes),
                       share_percent(row.cum, table.total));
        append_html_text(page.top_rows, strings[row.name]);
        page.top_rows += "</td></tr>\n";
    }
    page.top_note = table.functions > table.rows.size()
                        ? fmt::format("{} of {} functions shown: search to find the others",
                                      table.rows.size(), table.functions)
                        : fmt::format("{} functions", table.functions);
    return page;
}

} // namespace heapkit
