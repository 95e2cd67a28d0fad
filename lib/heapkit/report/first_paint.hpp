// SPDX-License-Identifier: MIT
// What a profile's page shows before its data is read: Top's first rows as the page draws
// them when it opens (report_top.js, no refinement, sorted by flat), and the header's
// total. The writer puts them in the HTML ahead of the data, so that the reader sees a
// real Top at once while the browser still reads and unpacks a big report's data; the
// page then draws the same rows over them.
#pragma once

#include "heapkit/emit/flame/tables.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// One function's row: its string id, and its flat and cum in the chosen sample type.
struct TopRow {
    uint32_t name;
    int64_t flat;
    int64_t cum;
};

// The rows Top draws (SHOWN_ROWS of report_top.js).
constexpr size_t top_rows_shown = 1000;

struct TopTable {
    std::vector<TopRow> rows; // the first `shown` in Top's order
    size_t functions = 0;     // every function with a row (some node of it not 0)
    int64_t total = 0;        // every stack's value
};

// Top of the prefix tree (`parents`: each node's parent, -1 for a root, parents before
// their children; `names`: each node's function's string id, below strings.size()), with
// leaf l (a node where stacks end) worth values[l] (missing values are 0). The order is
// report_top.js's: |flat| down, then |cum| down, then the name (byte order: UTF-16's
// but for names past U+FFFF).
TopTable top_rows(std::span<const int32_t> parents, std::span<const uint32_t> names,
                  std::span<const uint32_t> leaves, std::span<const int64_t> values,
                  const FlameNames& strings, size_t shown);

// The page's pieces drawn ahead, as HTML (text escaped), each for its slot in report.html.
struct FirstPaint {
    std::string sources;  // "#sources": the dumps read
    std::string types;    // the sample type chooser's <option>s
    std::string total;    // "#total": "inuse_space: 1.50MB total"
    std::string top_note; // "#top-note"
    std::string top_head; // Top's <thead> row
    std::string top_rows; // Top's <tbody> rows
};

// `table` drawn as report_top.js and report_page.js draw it, in sample type `type_name`
// (amounts in bytes when `bytes`).
FirstPaint first_paint(const TopTable& table, const FlameNames& strings, std::string_view type_name,
                       bool bytes);

// `text` appended to `out` with '<', '>', '&' and '"' as entities, every other byte as it is:
// the live table sets the same text through textContent, so the rows drawn ahead must keep
// what escape_xml (util/xml.hpp) would replace (controls, invalid UTF-8).
void append_html_text(std::string& out, std::string_view text);

} // namespace heapkit
