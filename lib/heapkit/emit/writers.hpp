// SPDX-License-Identifier: MIT
// The views of one profile, or of the change between two.
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"
#include "heapkit/util/sink.hpp"

#include <string>

namespace heapkit {

// The profile as a gzipped perftools.profiles.Profile: what `go tool pprof` reads.
Result<std::string> write_pprof(const Profile& profile, const PprofOptions& options);

// Collapsed stacks as flamegraph.pl reads them: one line per distinct stack, root first,
// frames joined by ';', a space, the integer value. Identical stacks are summed, zero
// totals left out, lines sorted bytewise so the output is deterministic. Allocator frames
// (and drop_frames) are cut as jeprof cuts them: the rootmost match and all leafward.
// The output goes to
// `sink` in pieces of about a megabyte.
Result<void> write_folded(const Profile& profile, const FoldedOptions& options, const Sink& sink);
// The same output as one string.
Result<std::string> write_folded(const Profile& profile, const FoldedOptions& options);

// Two profiles' collapsed stacks side by side, as difffolded.pl writes them: one line per
// stack in either, "stack BEFORE AFTER" (0 where a side lacks it), sorted by stack.
// flamegraph.pl draws such lines as a differential graph. Stacks meet by their spelled
// frames, so dumps of two runs (different addresses) compare.
Result<void> write_folded_diff(const Profile& before, const Profile& after,
                               const FoldedOptions& options, const Sink& sink);

// The profile's collapsed stacks, as write_folded() makes them with `folded`, drawn as a
// standalone interactive SVG flame graph (flamegraph.pl's conventions: a root "all", a
// <title> "NAME (N UNIT, P%)" per frame; hover, click to zoom, Ctrl-F to search).
Result<void> write_flame_graph(const Profile& profile, const FoldedOptions& folded,
                               FlameOptions options, const Sink& sink);

// The differential flame graph of write_folded_diff's lines: widths are after's, colours
// the change (red grew, blue shrank), as flamegraph.pl draws difffolded.pl's output.
Result<void> write_flame_graph_diff(const Profile& before, const Profile& after,
                                    const FoldedOptions& folded, FlameOptions options,
                                    const Sink& sink);

// A table like `jeprof --text` and `go tool pprof -top`: per function, flat (the value
// of the stacks ending in it), flat%, sum% (running), cum (the stacks through it, each
// counted once however often the function recurs in it) and cum%, sorted by flat. Frames
// are the ones write_folded spells, so every view names the same functions.
Result<void> write_text_report(const Profile& profile, const FoldedOptions& folded,
                               const TextOptions& options, const Sink& sink);

// An allocation log's table (Profile::from_log), one row per site (the leaf of its stacks
// as write_folded spells them) ranked by folded.sample: allocations and bytes per second
// of the log, lifetime p50/p90/p99/max, the shares freed within 1 ms / 10 ms / 1 s,
// byte-seconds, and the share freed by another thread. Lifetimes are weighed by what each
// allocation stands for once unsampled.
Result<void> write_log_report(const Profile& profile, const FoldedOptions& folded,
                              const TextOptions& options, const Sink& sink);

// An allocation log's lifetimes as an SVG chart: a histogram (log-scale buckets, 100 ns to
// 100 s) of all its objects, and one per site for the first options.site_count sites of
// write_log_report's ranking. An error for a profile that is not a log's.
Result<void> write_lifetime_chart(const Profile& profile, const FoldedOptions& folded,
                                  const LifetimeOptions& options, const Sink& sink);

// The same table of after - before (write_folded_diff's change): flat and cum are
// changes, sorted by their size; percentages are of the base's total (as go tool
// pprof -diff_base gives them).
Result<void> write_text_report_diff(const Profile& before, const Profile& after,
                                    const FoldedOptions& folded, const TextOptions& options,
                                    const Sink& sink);

// Whether `drop_frames` (FrameOptions') matches the whole simplified name of some frame
// of `profile`, or the address text of a location without a name: a pattern that matches
// nothing cuts nothing, most likely a typo. False for an invalid regex too.
bool drop_frames_match(const Profile& profile, const std::string& drop_frames);

// A program's own allocation wrapper the allocator list does not know: the frame just
// above the allocator under most of the bytes, reached from several callers. Naming it
// with the --drop-frames that cuts it turns "98 % in xyz_alloc" into the callers that
// asked for the memory. A stripped program's wrapper has no name to be known by: a
// function without one just above the allocator, reached from many callers, is named
// whatever its share (blender's MEM_lockfree_mallocN held 29.9 % from 51 callers).
struct WrapperHint {
    std::string frame;       // the leaf frame's text, as write_folded spells it
    std::string drop_frames; // a drop_frames regex matching that function's whole name
    double share = 0;        // of all of the sample type's (absolute) value, 0..1
    size_t callers = 0;      // distinct frames just above it
    bool unnamed = false;    // hinted as an unnamed function with many callers
};

// The leaves of write_folded(profile, options)'s stacks that look like wrappers, largest
// share first: one holding over half of the value and reached from at least two distinct
// callers; and any function without a name that calls the allocator, reached from at
// least 8 distinct callers and holding at least 2 % of the value.
Result<std::vector<WrapperHint>> find_wrapper_hints(const Profile& profile,
                                                    const FoldedOptions& options);

} // namespace heapkit
