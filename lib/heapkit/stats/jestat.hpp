// SPDX-License-Identifier: MIT
// The stats stage's parts: inputs named in JestatOptions in, a report out (run_jestat,
// options.hpp, runs them in order).
#pragma once

#include "heapkit/read/raw_dump.hpp"
#include "heapkit/stats/options.hpp"
#include "heapkit/stats/reconcile.hpp"
#include "heapkit/util/error.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace heapkit::stats {

// malloc_stats_print output in either format, told apart by its first byte ('{': JSON) or
// line (the text format's banner), found inside a stream of other lines (stats_stream.hpp).
// `source` names it in messages; `note`, when given, says what was skipped ("" nothing).
Result<JemallocStats> parse_stats(std::string_view stream, std::string_view source,
                                  std::string* note = nullptr);

// The heap profile at `path`: its in-use total (unsampled bytes over all stacks), and its
// sampled objects smaller than `sampled_extent` bytes (the smallest large size class).
Result<ProfileFigures> profile_figures(const std::string& path, uint64_t sampled_extent);
ProfileFigures profile_figures(const RawDump& dump, uint64_t sampled_extent);

// `heapfold --text --stats STATS DUMP` for the files `options` names (quoted for a shell),
// when slabs are partly used and both are files (not standard input); else "".
std::string per_stack_command(const JestatOptions& options, uint64_t slab_waste);

// Reads what `options` names and reconciles it; what was skipped in the inputs goes to
// `notes` (one line each).
Result<Reconciliation> load_reconciliation(const JestatOptions& options,
                                           std::vector<std::string>& notes);

// The report in the chosen format.
std::string render(const Reconciliation& report, ReportFormat format, std::string_view source);

} // namespace heapkit::stats
