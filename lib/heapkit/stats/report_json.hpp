// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/stats/reconcile.hpp"

#include <string>

namespace heapkit::stats {

// The reconciliation for machines: every figure in bytes (exact integers), rows in order
// with their keys, sentences and knobs. Stable keys: see man/jestat.1.
std::string report_json(const Reconciliation& report, std::string_view stats_source);

} // namespace heapkit::stats
