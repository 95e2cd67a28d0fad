// SPDX-License-Identifier: MIT
// What grows in a series of dumps of one program: a ranked table, a chart above a flame
// graph, a pprof.
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"
#include "heapkit/util/sink.hpp"

#include <cstddef>
#include <span>
#include <string>

namespace heapkit {

struct GrowthOptions {
    size_t node_count = 10; // suspects listed, and drawn in the chart; 0: all (chart: 10)
    std::string note;       // said last under the table (e.g. that the measure is estimated)
};

// Leak suspects of a series (load_series' dumps, oldest first): every stack, spelled as
// write_folded spells it with `folded` (so that stacks of runs with other addresses
// meet), followed through the dumps. A run is one process: a new one begins where the pid
// in jemalloc's file names or the main executable's load address changes, and each run
// has its own intercept in a least-squares line with one slope. Stacks are ranked by
// growth that persists: those that grew and whose value never fell within a run first,
// then the rest; within each, by the slope over the later half of each run times R^2 of
// the whole fit (per second when the dumps' times differ, else per dump), so that a
// cache that filled and stayed flat, or a batch that rose and fell back, ranks below
// steady growth.
//
// The table lists the top options.node_count: persistent growth, slope per second and
// per dump, R^2, first and last value (of the runs of two dumps or more: a run of one
// dump at either end shows no growth), whether monotonic, the allocating frame (the
// leaf-most frame left after the allocator frames are cut) with its file:line, and the
// stack; then notes, "note: ..." lines: runs of one dump set aside, a run that ends with
// a final dump (prof_final, written after the program's destructors).
Result<void> write_growth_report(std::span<const Profile> dumps, const FoldedOptions& folded,
                                 const GrowthOptions& options, const Sink& sink);

// One standalone SVG: a chart of the top suspects' values over time (a line each, a
// legend naming their allocating frames, axes in bytes or objects and in seconds or
// dumps), above the flame graph of the last dump (as write_growth_pprof's) whose frames are
// coloured by the persistent growth of the stacks through them (red grows, blue shrinks).
Result<void> write_growth_graph(std::span<const Profile> dumps, const FoldedOptions& folded,
                                const GrowthOptions& options, FlameOptions flame, const Sink& sink);

// The last dump (of the runs of two dumps or more) as a gzipped pprof with two more sample types:
// "growth" (the ranking's persistent growth) and "slope" (the least-squares slope), in bytes (or
// objects) per second, per dump when the dumps' times do not differ, of options.default_type. A
// stack's growth is shared among the last dump's samples that spell it, in proportion to
// their values; stacks with nothing in use in the last dump carry none.
Result<std::string> write_growth_pprof(std::span<const Profile> dumps, const PprofOptions& options);

} // namespace heapkit
