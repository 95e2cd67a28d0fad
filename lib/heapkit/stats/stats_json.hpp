// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/stats/jemalloc_stats.hpp"
#include "heapkit/util/error.hpp"

#include <string_view>

namespace heapkit::stats {

// Parses what malloc_stats_print writes with option "J" (MALLOC_CONF
// stats_print:true,stats_print_opts:J) for jemalloc 5.2 and 5.3. The general section
// (arenas.page, arenas.bin) and merged or per-arena statistics must be there; bins may be
// left out (opts "b"). `source` names the input in messages. Another program's JSON, a
// jemalloc built without statistics (config.stats false) or JSON cut short is an error.
Result<JemallocStats> parse_stats_json(std::string_view text, std::string_view source);

} // namespace heapkit::stats
