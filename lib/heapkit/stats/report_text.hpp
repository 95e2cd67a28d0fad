// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/stats/reconcile.hpp"

#include <string>

namespace heapkit::stats {

// The reconciliation as a table for people: the waterfall (each row with what it is and
// the knob that moves it), the RSS split when known, and the worst size classes.
std::string report_text(const Reconciliation& report, std::string_view stats_source);

// For statistics printed at exit (opt.stats_print:true, the "2> stats.json" recipe): that
// they were taken after the program's destructors and atexit handlers, and how to take
// them while it runs; empty for others.
std::string at_exit_note(const JemallocStats& stats);

} // namespace heapkit::stats
