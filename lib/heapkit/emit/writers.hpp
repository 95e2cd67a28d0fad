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

// The same table of after - before (write_folded_diff's change): flat and cum are
// changes, sorted by their size; percentages are of the total change.
Result<void> write_text_report_diff(const Profile& before, const Profile& after,
                                    const FoldedOptions& folded, const TextOptions& options,
                                    const Sink& sink);

} // namespace heapkit
