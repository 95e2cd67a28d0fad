// SPDX-License-Identifier: MIT
// What jestat (and a program calling the stats stage) asks for, and the call that answers:
// the stats stage's public face (jestat.hpp holds its parts).
#pragma once

#include "heapkit/util/error.hpp"

#include <string>
#include <vector>

namespace heapkit::stats {

enum class ReportFormat { text, json, svg };

struct JestatOptions {
    std::string stats; // malloc_stats_print output (JSON with option J, or text); "-": stdin
    std::string dump;  // a heap_v2 dump (or jeprof symbolized profile) of the same moment; "" none
    std::string smaps; // /proc/PID/smaps or smaps_rollup of the same moment; "" none
    ReportFormat format = ReportFormat::text;
    std::string output; // "" or "-": standard output
};

// Reads, reconciles and writes the report to options.output (all or nothing); returns
// the notes for the user (what was skipped in the inputs, one line each).
Result<std::vector<std::string>> run_jestat(const JestatOptions& options);

} // namespace heapkit::stats
