// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/stats/reconcile.hpp"

#include <string>

namespace heapkit::stats {

// The reconciliation as a table for people: the waterfall (each row with what it is and
// the knob that moves it), the RSS split when known, and the worst size classes.
std::string report_text(const Reconciliation& report, std::string_view stats_source);

} // namespace heapkit::stats
