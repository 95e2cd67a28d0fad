// SPDX-License-Identifier: MIT
// The stats stage's front door: inputs named in JestatOptions in, a report out.
#pragma once

#include "heapkit/stats/options.hpp"
#include "heapkit/stats/reconcile.hpp"
#include "heapkit/util/error.hpp"

#include <string_view>

namespace heapkit::stats {

// malloc_stats_print output in either format, told apart by its first byte ('{': JSON) or
// line (the text format's banner). `source` names it in messages.
Result<JemallocStats> parse_stats(std::string_view text, std::string_view source);

// The heap profile's in-use total at `path`: unsampled bytes over all stacks.
Result<int64_t> profile_inuse(const std::string& path);

// Reads what `options` names and reconciles it.
Result<Reconciliation> load_reconciliation(const JestatOptions& options);

// The report in the chosen format.
std::string render(const Reconciliation& report, ReportFormat format, std::string_view source);

// Reads, reconciles and writes the report to options.output (all or nothing).
Result<void> run_jestat(const JestatOptions& options);

} // namespace heapkit::stats
