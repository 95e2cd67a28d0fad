// SPDX-License-Identifier: MIT
// heapkit's front door: jemalloc heap dumps in, one view out.
//
//   heapkit::ViewRequest request{{{"jeprof.1234.0.f.heap"}}};
//   auto views = heapkit::load_views(request);                // read, unsample, symbolize
//   heapkit::write_view(std::move(*views), {heapkit::ViewKind::pprof}, sink);
//
// The stages are there too, one header each: load/load.hpp (load_profile, load_series),
// emit/writers.hpp (write_pprof, write_folded, write_flame_graph, write_text_report and
// their diffs), growth/growth.hpp (what grows in a series). No stage includes this file.
// Every function reports failure as an Error; none throws. Last, what the tools do once
// their flags are read: jeprof2pprof and heapfold (run_tool, in tool.cpp) and heapkit-index
// (run_index_tool, index_tool.cpp); jestat's is stats/options.hpp's run_jestat.
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/growth/growth.hpp"
#include "heapkit/load/load.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"
#include "heapkit/util/sink.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// What a tool asks to see: dumps, optionally the dumps they are compared with, or a
// series of one program's dumps; loaded as `load` says, stacks kept as `stacks` says.
struct ViewRequest {
    std::vector<Input> inputs;
    // Every view shows the change from these (merged when several): after - before.
    std::vector<Input> bases;
    // jemalloc's statistics of the base's moment (--base-stats), as load.stats are of the
    // inputs': the change of an estimated fragmentation profile needs both moments'.
    std::string base_stats;
    // The inputs are dumps of one program over time (load_series), ranked by what grows;
    // bases are then refused.
    bool series = false;
    LoadOptions load;
    StackFilter stacks;
};

// What load_views found: the profile (or the series) and what loading said of all inputs.
struct Views {
    Profile profile;             // the inputs merged; empty for a series
    std::optional<Profile> base; // the bases merged, when some were given
    std::vector<Profile> series; // a series' dumps, oldest first
    LoadReport report;           // of the inputs and the bases, each warning once
    // Whether --focus, --ignore and --hide matched a frame of some profile loaded (true for an
    // empty pattern): one that matches nothing is most likely a typo.
    FilterMatches matched{false, false, false};
    // Of a final dump (load/final_dump.hpp): the sentence saying it was written at exit,
    // also first in the profile's notes; else empty.
    std::string exit_note;
};

Result<Views> load_views(const ViewRequest& request);

// The shapes a view takes. With a base, each shows the change; for a series, what grows.
enum class ViewKind {
    pprof,       // gzipped pprof (a series: the last dump, with growth and slope types)
    folded,      // collapsed stacks (a base: "stack BEFORE AFTER"; a series: the table of
                 // growth suspects)
    flame_graph, // SVG (a base: differential; a series: the growth chart above the graph)
    text,        // the table of functions (a series: not available); an allocation log's
                 // table per site
    lifetimes,   // an allocation log's lifetime histograms (SVG; only a log has them)
    html,        // one interactive HTML page with every view (a base: the change; a
                 // series: the totals over time, a window, the suspects)
};

struct ViewOptions {
    ViewKind kind = ViewKind::folded;
    FoldedOptions folded; // every view's frames and sample type (pprof: its default type)
    PprofOptions pprof;   // its frames and default type are folded's
    FlameOptions flame;
    TextOptions text;
    GrowthOptions growth;
    LifetimeOptions lifetimes;
    HtmlOptions html;
};

// Writes the view of `views` that `options` ask for to `sink`. A base means the same for
// every kind: the change from it. pprof, which holds one profile, gets the profile less
// the base (negative values, as go tool pprof's -diff_base makes), the others show
// before and after side by side. `views` is taken whole, as subtracting is done in place
// (a large profile is not copied): move it in, or copy it to keep it.
Result<void> write_view(Views views, const ViewOptions& options, const Sink& sink);

// Whether `kind` writes binary data (refused on a terminal).
bool is_binary(ViewKind kind);

// What jeprof2pprof and heapfold take: a request and a view, and what only a tool decides.
// run_tool fills in the request's inputs and bases, and its symbolizer's cache, from these.
struct ToolOptions {
    ViewRequest request;                  // series, loading and stack filters
    ViewOptions view;                     // its kind is the tool's (heapfold: after parsing)
    std::vector<std::string> inputs;      // dumps, or directories of dumps; "-": standard input
    std::vector<std::string> bases;       // --base dumps, likewise
    std::string output;                   // "" or "-" is standard output
    bool cache = true;                    // use the address indexes (default_cache_directory())
    NewIndexes index = NewIndexes::later; // --index: when a new build's index is made
    bool quiet = false;                   // no progress line, no warnings
    bool strict = false; // unnamed frames make exit status 2; later builds are not used
};

// The tools' run: the view `options` ask for written to options.output, what a person
// should know said on standard error as "<tool>: warning: ...", each file's once, after
// the view (a cache directory that cannot be used: before loading). Returns the exit
// status: 0 done; 1 an input or output error, said as "<tool>: error: ..." (the output is
// left as it was); 2 under options.strict when a frame stayed unnamed (the view is still
// written). Unlike the calls above, a failed allocation propagates as std::bad_alloc,
// once unwinding has removed any temporary output file: the tools' one catch reports it.
int run_tool(std::string_view tool, ToolOptions options);

// What heapkit-index takes: the files to index (each executable or shared library), where
// the cache and debug files are (symbols.cache_directory "": default_cache_directory()),
// and what else to do.
struct IndexToolOptions {
    std::vector<std::string> files;
    SymbolizeOptions symbols; // its cache_directory, debug_dirs and sysroot
    bool quiet = false;       // no line per file, problems only
    bool background = false;  // as the tools start it: lowest priority, bounded (enter_background)
    bool stats = false;       // say what the cache holds
    bool prune = false;       // remove the least recently used indexes beyond the bound now
};

// heapkit-index's run: each file's index made or kept, a line each on standard output,
// the cache pruned and described as asked. Returns the exit status: 0 when every file has
// its index, 1 otherwise or when the cache cannot be used (said as "heapkit-index: error:").
int run_index_tool(const IndexToolOptions& options);

// Whether `pattern` is one --focus, --ignore, --hide and --drop-frames take (RE2's syntax,
// pprof's): the error says what is wrong with it.
Result<void> check_pattern(std::string_view pattern);

} // namespace heapkit
