// SPDX-License-Identifier: MIT
// The interactive HTML report: one self-contained page (no request to any network) with
// every sample type, Top, a flame graph, callers and callees, refinement, and the change
// from a base or over a series.
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/growth/growth.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"
#include "heapkit/util/sink.hpp"

#include <optional>
#include <span>

namespace heapkit {

// `profile` (with `base`, the change from it) as one HTML page. folded.sample is the type
// it opens on; every type the profile (and the base) has can be chosen in the page. Taken
// by value: their stacks are let go of once the page's tables hold them, before the page
// is made (on a million stacks, a third of the writer's peak).
Result<void> write_html_report(Profile profile, std::optional<Profile> base,
                               const FoldedOptions& folded, const HtmlOptions& options,
                               const Sink& sink);

// A series (load_series' dumps, oldest first) as one HTML page: the totals over time with
// a window whose first and last dumps the other views compare, and the leak suspects of
// write_growth_report, ranked by folded.sample.
Result<void> write_html_series(std::span<const Profile> dumps, const FoldedOptions& folded,
                               const GrowthOptions& growth, const HtmlOptions& options,
                               const Sink& sink);

} // namespace heapkit
