// SPDX-License-Identifier: MIT
// What jestat (and a program calling the stats stage) asks for.
#pragma once

#include <string>

namespace heapkit::stats {

enum class ReportFormat { text, json, svg };

struct JestatOptions {
    std::string stats; // malloc_stats_print output (JSON with option J, or text); "-": stdin
    std::string dump;  // a heap_v2 dump (or jeprof symbolized profile) of the same moment; "" none
    std::string smaps; // /proc/PID/smaps or smaps_rollup of the same moment; "" none
    ReportFormat format = ReportFormat::text;
    std::string output; // "" or "-": standard output
};

} // namespace heapkit::stats
