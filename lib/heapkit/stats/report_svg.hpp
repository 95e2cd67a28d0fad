// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/stats/reconcile.hpp"

#include <string>

namespace heapkit::stats {

// The waterfall as a standalone SVG chart: one bar per row, steps floating from the running
// total, subtotals from zero; each bar's title holds its sentence and knob.
std::string report_svg(const Reconciliation& report, std::string_view stats_source);

} // namespace heapkit::stats
