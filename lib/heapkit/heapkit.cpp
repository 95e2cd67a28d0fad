// SPDX-License-Identifier: MIT
// The front door: what a tool asks for, loaded, and written as one view.
#include "heapkit/heapkit.hpp"

#include "heapkit/load/final_dump.hpp"
#include "heapkit/report/report.hpp"
#include "heapkit/stats/fragmentation.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>

namespace heapkit {
namespace {

void add_matches(FilterMatches& into, const FilterMatches& more) {
    into.focus = into.focus || more.focus;
    into.ignore = into.ignore || more.ignore;
    into.hide = into.hide || more.hide;
}

Result<Profile> load_filtered(std::span<const Input> inputs, const LoadOptions& load,
                              const StackFilter& stacks, Views& views) {
    HEAPKIT_TRY_ASSIGN(Loaded loaded, load_profile(inputs, load));
    HEAPKIT_TRY_ASSIGN(FilterMatches matched, filter_stacks(loaded.profile, stacks));
    add_matches(views.matched, matched);
    // A warning said of the dumps and again of the bases is said once, and each file's
    // unnamed addresses are told once for both.
    merge_report(views.report, std::move(loaded.report));
    return std::move(loaded.profile);
}

Result<Views> load_series_views(const ViewRequest& request) {
    if (!request.bases.empty()) {
        return fail("a series is ranked by what grows within it: it takes no base");
    }
    HEAPKIT_TRY_ASSIGN(LoadedSeries loaded, load_series(request.inputs, request.load));
    Views views;
    for (Profile& dump : loaded.dumps) {
        HEAPKIT_TRY_ASSIGN(FilterMatches matched, filter_stacks(dump, request.stacks));
        add_matches(views.matched, matched);
    }
    views.series = std::move(loaded.dumps);
    views.report = std::move(loaded.report);
    return views;
}

// pprof has no two-sided profile: the change is the profile less the base.
Result<std::string> change_pprof(Views& views, const PprofOptions& options) {
    HEAPKIT_TRY(subtract_base(views.profile, *views.base));
    return write_pprof(views.profile, options);
}

Result<void> write_pprof_view(Views& views, const ViewOptions& options, const Sink& sink) {
    PprofOptions pprof = options.pprof;
    pprof.default_type = options.folded.sample;
    pprof.frames = options.folded.frames;
    HEAPKIT_TRY_ASSIGN(std::string bytes, !views.series.empty()
                                              ? write_growth_pprof(views.series, pprof)
                                          : views.base ? change_pprof(views, pprof)
                                                       : write_pprof(views.profile, pprof));
    return sink(bytes);
}

Result<void> write_series_view(Views& views, const ViewOptions& options, const Sink& sink) {
    switch (options.kind) {
    case ViewKind::folded:
        return write_growth_report(views.series, options.folded, options.growth, sink);
    case ViewKind::flame_graph:
        return write_growth_graph(views.series, options.folded, options.growth, options.flame,
                                  sink);
    case ViewKind::pprof:
        return write_pprof_view(views, options, sink);
    case ViewKind::lifetimes:
        return fail("a series of dumps has no lifetimes: they are in an allocation log");
    case ViewKind::html:
        return write_html_series(views.series, options.folded, options.growth, options.html, sink);
    case ViewKind::text:
        break;
    }
    return fail("a series has no table of functions: its table ranks stacks by growth");
}

Result<void> write_profile_view(Views& views, const ViewOptions& options, const Sink& sink) {
    const FoldedOptions& folded = options.folded;
    const Profile& after = views.profile;
    switch (options.kind) {
    case ViewKind::folded:
        return views.base ? write_folded_diff(*views.base, after, folded, sink)
                          : write_folded(after, folded, sink);
    case ViewKind::flame_graph:
        return views.base ? write_flame_graph_diff(*views.base, after, folded, options.flame, sink)
                          : write_flame_graph(after, folded, options.flame, sink);
    case ViewKind::text: {
        if (after.from_log) {
            return write_log_report(after, folded, options.text, sink);
        }
        if (views.base) {
            return write_text_report_diff(*views.base, after, folded, options.text, sink);
        }
        TextOptions text = options.text;
        if (!views.exit_note.empty()) {
            text.header_note += (text.header_note.empty() ? "" : "; ") + views.exit_note;
        }
        return write_text_report(after, folded, text, sink);
    }
    case ViewKind::lifetimes:
        return write_lifetime_chart(after, folded, options.lifetimes, sink);
    case ViewKind::html:
        return write_html_report(std::move(views.profile), std::move(views.base), folded,
                                 options.html, sink);
    case ViewKind::pprof:
        break;
    }
    return write_pprof_view(views, options, sink);
}

// A final dump said to be one in every view of it, pointing to the dumps taken while the
// process ran: the program has freed most of what it held by then.
void note_final_dump(Views& views, std::span<const Input> inputs) {
    if (inputs.size() != 1 || inputs.front().bytes || views.profile.from_log) {
        return;
    }
    views.exit_note = final_dump_note(inputs.front().name);
    if (!views.exit_note.empty()) {
        views.profile.notes.insert(views.profile.notes.begin(), views.exit_note);
    }
}

// A fragmentation profile is an estimate, and says so where a reader looks first: the
// text's header, the flame graph's and the page's titles (its note is in every view's
// notes: pprof comments, the graph's subtitle, the page).
void label_estimate(const Profile& profile, ViewOptions& options) {
    std::string_view source =
        profile.sources.empty() ? std::string_view() : std::string_view(profile.sources.front());
    options.text.header_note = stats::estimate_label;
    if (options.flame.title.empty()) {
        options.flame.title = fmt::format("Fragmentation per stack ({})", stats::estimate_label);
    }
    if (options.html.title.empty()) {
        options.html.title =
            fmt::format("heapkit: fragmentation ({}), {}", stats::estimate_label, source);
    }
}

} // namespace

Result<Views> load_views(const ViewRequest& request) {
    // One set of statistics is one moment: it cannot stand for a series', and a base's
    // moment needs its own.
    if (!request.load.stats.empty() && request.series) {
        return fail("--stats is of one dump's moment: it takes no --growth (a series of peak "
                    "captures uses each one's STEM.stats.json beside it)");
    }
    if (!request.load.stats.empty() && !request.bases.empty() && request.base_stats.empty()) {
        return fail("--stats is of the dump's moment, not the base's: give the base's "
                    "statistics with --base-stats");
    }
    if (!request.base_stats.empty() && request.bases.empty()) {
        return fail("--base-stats is of a base's moment: give the base with --base");
    }
    if (request.series) {
        return load_series_views(request);
    }
    Views views;
    HEAPKIT_TRY_ASSIGN(views.profile,
                       load_filtered(request.inputs, request.load, request.stacks, views));
    note_final_dump(views, request.inputs);
    if (!request.bases.empty() && views.profile.from_log) {
        // The log's measures are not differences: a change of them would need a second log.
        return fail("an allocation log takes no --base");
    }
    if (!request.bases.empty()) {
        LoadOptions load = request.load;
        load.stats = request.base_stats;
        HEAPKIT_TRY_ASSIGN(views.base, load_filtered(request.bases, load, request.stacks, views));
        HEAPKIT_TRY(check_same_types(views.profile, *views.base));
    }
    return views;
}

Result<void> write_view(Views views, const ViewOptions& options, const Sink& sink) {
    // A pprof's own sample types are named as it names them (a CPU profile's "samples"), and
    // so are an estimate's; a series' dumps share their types.
    const Profile& typed = views.series.empty() ? views.profile : views.series.back();
    ViewOptions named = options;
    if (!typed.named_types.empty()) {
        named.folded.sample_name = sample_name(typed, options.folded.sample);
        named.folded.sample_unit = sample_unit(typed, options.folded.sample);
    }
    if (stats::is_fragmentation_estimate(typed)) {
        label_estimate(typed, named);
        if (!views.series.empty()) {
            named.growth.note = fmt::format(
                "{} is an estimate in each dump, from the statistics beside it (heapfold(1), "
                "FRAGMENTATION): each size class's total is exact, its split between stacks is "
                "not",
                sample_name(typed, options.folded.sample));
        }
    }
    return views.series.empty() ? write_profile_view(views, named, sink)
                                : write_series_view(views, named, sink);
}

bool is_binary(ViewKind kind) {
    return kind == ViewKind::pprof;
}

} // namespace heapkit
