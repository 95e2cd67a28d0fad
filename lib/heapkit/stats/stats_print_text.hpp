// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/stats/jemalloc_stats.hpp"
#include "heapkit/util/error.hpp"

#include <string_view>

namespace heapkit::stats {

// True when `text` looks like malloc_stats_print's text format (its first non-blank line).
bool is_stats_print_text(std::string_view text);

// Parses malloc_stats_print's text format, as redis' MEMORY MALLOC-STATS returns it, for
// jemalloc 5.2 and 5.3. Only labelled figures are read ("Allocated: …", "Page size: …",
// "tcache_bytes: …", the decay rows, and the bins table's columns by their header names),
// never a column by its position, so columns added between versions do no harm. The
// whole print must be there, up to "--- End jemalloc statistics ---". Errors name
// `source` and the line.
Result<JemallocStats> parse_stats_print_text(std::string_view text, std::string_view source);

} // namespace heapkit::stats
