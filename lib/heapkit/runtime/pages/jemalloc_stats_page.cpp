// SPDX-License-Identifier: MIT
#include "heapkit/runtime/pages/jemalloc_stats_page.hpp"

#include "heapkit/read/heap_v2.hpp"
#include "heapkit/runtime/fragmentation_sampler.hpp"
#include "heapkit/runtime/jemalloc_stats.hpp"
#include "heapkit/runtime/pages/page_query.hpp"
#include "heapkit/runtime/profiler.hpp"
#include "heapkit/stats/jestat.hpp"
#include "heapkit/stats/smaps.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/try.hpp"
#include "heapkit/util/xml.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>

namespace heapkit::runtime {
namespace {

// Under the chart, where the slabs' free bytes lead: to the stacks that hold them, exact,
// when the fragmentation sample runs; else how to have them.
std::string stacks_line(const stats::Reconciliation& report) {
    if (report.slab_waste == 0) {
        return "";
    }
    if (fragmentation_sampling()) {
        return "<p>Which stacks hold the partly used slabs' free bytes: <a "
               "href=\"/debug/pprof/fragmentation?format=svg\">the fragmentation flame "
               "graph</a> (exact; <a href=\"/debug/pprof/fragmentation\">as pprof</a>).</p>\n";
    }
    return "<p>Which stacks hold the partly used slabs' free bytes: start the program with "
           "HEAPKIT_FRAGMENTATION=1 for /debug/pprof/fragmentation, or estimate them offline "
           "from a heap dump and this page's format=json (heapfold --stats).</p>\n";
}

// The chart above the table, for a browser. The SVG goes in inline, without its XML
// declaration (HTML has none).
std::string html_page(const stats::Reconciliation& report) {
    std::string chart = stats::render(report, stats::ReportFormat::svg, "this process");
    chart.erase(0, chart.find("<svg"));
    // escape_xml replaces control characters, line breaks included: a line at a time.
    std::string table;
    std::string text = stats::render(report, stats::ReportFormat::text, "this process");
    for (size_t at = 0, end = 0; at < text.size(); at = end + 1) {
        end = std::min(text.find('\n', at), text.size());
        table += escape_xml(std::string_view(text).substr(at, end - at)) + "\n";
    }
    return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Why is RSS bigger than "
           "the heap profile?</title></head><body>\n" +
           chart + stacks_line(report) + "<pre>" + table + "</pre>\n</body></html>\n";
}

std::optional<stats::ReportFormat> format_named(const std::string& name) {
    if (name == "text") {
        return stats::ReportFormat::text;
    }
    if (name == "json") {
        return stats::ReportFormat::json;
    }
    if (name == "svg") {
        return stats::ReportFormat::svg;
    }
    return std::nullopt;
}

const char* content_type(stats::ReportFormat format) {
    switch (format) {
    case stats::ReportFormat::json:
        return "application/json";
    case stats::ReportFormat::svg:
        return "image/svg+xml";
    case stats::ReportFormat::text:
        break;
    }
    return "text/plain; charset=utf-8";
}

// Arenas in use (initialized): printed only with the per-arena tables, asked here instead.
uint64_t arenas_in_use(const Mallctl& mallctl) {
    auto narenas = mallctl.read<unsigned>("arenas.narenas");
    uint64_t in_use = 0;
    for (unsigned i = 0; narenas && i < *narenas; ++i) {
        std::string name = fmt::format("arena.{}.initialized", i);
        auto initialized = mallctl.read<bool>(name.c_str());
        in_use += initialized && *initialized ? 1 : 0;
    }
    return in_use;
}

// What a heap profile of this moment says, when profiling is on and active: a dump per
// request, so only for the page, never for /metrics' scrapes. nullopt otherwise, or when
// the dump cannot be taken (the page then starts from what the program holds).
std::optional<stats::ProfileFigures> profile_now(const Mallctl& mallctl, uint64_t sampled_extent) {
    Profiler profiler(mallctl);
    if (!profiler.require_active()) {
        return std::nullopt;
    }
    auto bytes = profiler.dump(Profiler::Check::done_by_caller);
    if (!bytes) {
        return std::nullopt;
    }
    auto dump = parse_heap_v2(*bytes, "prof.dump");
    if (!dump) {
        return std::nullopt;
    }
    return stats::profile_figures(*dump, sampled_extent);
}

} // namespace

Result<stats::Reconciliation> reconcile_this_process(bool with_profile, std::string_view jemalloc) {
    HEAPKIT_TRY_ASSIGN(Mallctl mallctl, Mallctl::find(jemalloc));
    HEAPKIT_TRY_ASSIGN(std::string printed, print_jemalloc_stats(mallctl));
    HEAPKIT_TRY_ASSIGN(stats::JemallocStats figures,
                       stats::parse_stats(printed, "malloc_stats_print"));
    figures.arenas_in_use = arenas_in_use(mallctl);
    std::optional<stats::ResidentMemory> resident;
    if (auto rollup = read_input("/proc/self/smaps_rollup")) {
        if (auto parsed = stats::parse_smaps(rollup->bytes, rollup->name)) {
            resident = *parsed;
        }
    }
    std::optional<stats::ProfileFigures> profile;
    if (with_profile) {
        profile = profile_now(mallctl, figures.sampled_extent());
    }
    return stats::reconcile(figures, profile, resident);
}

Response jemalloc_stats_page(const Request& request) {
    static constexpr std::array<std::string_view, 1> allowed = {"format"};
    auto query = parse_query("/debug/jemalloc/stats", request.query, allowed);
    if (!query) {
        return failure(400, query.error());
    }
    auto named = query->find("format");
    std::string name = named == query->end() ? "text" : named->second;
    auto format = format_named(name);
    if (!format && name != "html") {
        return failure(400, Error{"/debug/jemalloc/stats: format is text, html, json or svg"});
    }
    if (auto mallctl = Mallctl::find(request.jemalloc); !mallctl) {
        return failure(404, mallctl.error());
    }
    auto report = reconcile_this_process(true, request.jemalloc);
    if (!report) {
        return failure(500, report.error());
    }
    if (!format) {
        Response page = text(200, html_page(*report));
        page.content_type = "text/html; charset=utf-8";
        return page;
    }
    Response response = text(200, stats::render(*report, *format, "this process"));
    response.content_type = content_type(*format);
    return response;
}

std::string jemalloc_stats_metrics() {
    auto report = reconcile_this_process();
    if (!report) {
        return "";
    }
    std::string out =
        "# HELP heapkit_jemalloc_waterfall_bytes jestat's reconciliation of jemalloc's "
        "statistics: each step (signed) and subtotal, by row\n"
        "# TYPE heapkit_jemalloc_waterfall_bytes gauge\n";
    for (const stats::Row& row : report->allocator) {
        out +=
            fmt::format("heapkit_jemalloc_waterfall_bytes{{row=\"{}\"}} {}\n", row.key, row.bytes);
    }
    if (!report->rss.empty()) {
        out += "# HELP heapkit_rss_split_bytes this process's RSS by kind (smaps_rollup)\n"
               "# TYPE heapkit_rss_split_bytes gauge\n";
        for (const stats::Row& row : report->rss) {
            out += fmt::format("heapkit_rss_split_bytes{{part=\"{}\"}} {}\n", row.key, row.bytes);
        }
    }
    return out;
}

} // namespace heapkit::runtime
