// SPDX-License-Identifier: MIT
#include "heapkit/runtime/pages/peaks_page.hpp"

#include "heapkit/heapkit.hpp"
#include "heapkit/runtime/pages/page_query.hpp"
#include "heapkit/runtime/peaks/peak_captures.hpp"
#include "heapkit/runtime/peaks/peak_watcher.hpp"
#include "heapkit/stats/jestat.hpp"
#include "heapkit/util/private_files.hpp"
#include "heapkit/util/xml.hpp"

#include <array>
#include <ctime>
#include <fmt/format.h>

namespace heapkit::runtime {
namespace {

constexpr unsigned demand_timeout_ms = 30'000;

std::string mib(const std::optional<uint64_t>& bytes) {
    return bytes ? fmt::format("{:.1f} MiB", static_cast<double>(*bytes) / (1 << 20)) : "–";
}

std::string utc(int64_t time_ms) {
    std::time_t seconds = static_cast<std::time_t>(time_ms / 1000);
    std::tm tm{};
    ::gmtime_r(&seconds, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
    return fmt::format("{}.{:03} UTC", text, time_ms % 1000);
}

std::string list_page(const std::string& directory, const std::vector<Capture>& captures) {
    std::string rows;
    for (auto it = captures.rbegin(); it != captures.rend(); ++it) {
        const Capture& c = *it;
        std::string link = "/debug/jemalloc/peaks?capture=" + escape_xml(c.stem);
        rows += fmt::format(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} / {}</td><td>{}</td>"
            "<td><a href=\"{}&amp;view=pprof\">pprof</a> <a href=\"{}&amp;view=svg\">flame "
            "graph</a> <a href=\"{}&amp;view=stats\">jestat</a> <a "
            "href=\"{}&amp;view=heap\">raw</a></td></tr>\n",
            utc(c.time_ms), trigger_name(c.trigger), mib(c.sample.allocated), mib(c.sample.rss),
            mib(c.sample.cgroup_usage), mib(c.sample.cgroup_limit), escape_xml(c.stem), link, link,
            link, link);
    }
    std::string growth =
        captures.size() >= 3
            ? "<p>Over all of them: <a href=\"/debug/jemalloc/peaks?view=growth\">what grew "
              "(heapfold --growth, SVG)</a>, <a "
              "href=\"/debug/jemalloc/peaks?view=growth_table\">as a table</a>.</p>\n"
            : "<p>The growth over the captures needs 3 of them.</p>\n";
    return fmt::format(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Heap peaks</title></head>"
        "<body>\n<h1>Heap peaks</h1>\n<p>Captures in <code>{}</code>, newest first (heap: "
        "jemalloc's stats.allocated; cgroup: usage / limit).</p>\n{}<table border=\"1\" "
        "cellpadding=\"4\">\n<tr><th>time</th><th>trigger</th><th>heap</th><th>RSS</th>"
        "<th>cgroup</th><th>files</th><th>views</th></tr>\n{}</table>\n</body></html>\n",
        escape_xml(directory), growth, rows);
}

Response html(std::string body) {
    Response page = text(200, std::move(body));
    page.content_type = "text/html; charset=utf-8";
    return page;
}

// heapfold's views of `paths` (one dump, or a series).
Response view_of(std::vector<std::string> paths, ViewKind kind, bool series,
                 const std::string& filename) {
    ViewRequest request;
    for (std::string& path : paths) {
        request.inputs.push_back(Input{std::move(path), std::nullopt});
    }
    request.series = series;
    auto views = load_views(request);
    if (!views) {
        return failure(500, views.error());
    }
    ViewOptions options;
    options.kind = kind;
    std::string out;
    auto written =
        write_view(std::move(*views), options, [&](std::string_view piece) -> Result<void> {
            out += piece;
            return {};
        });
    if (!written) {
        return failure(500, written.error());
    }
    switch (kind) {
    case ViewKind::pprof:
        return binary(std::move(out), "application/octet-stream", filename + ".pb.gz");
    case ViewKind::flame_graph:
        return binary(std::move(out), "image/svg+xml", "");
    default:
        return text(200, std::move(out));
    }
}

Response capture_view(const std::string& directory, const Capture& capture,
                      const std::string& view) {
    std::string base = directory + "/" + capture.stem;
    if (view == "pprof") {
        return view_of({base + ".heap"}, ViewKind::pprof, false, capture.stem);
    }
    if (view == "svg") {
        return view_of({base + ".heap"}, ViewKind::flame_graph, false, capture.stem);
    }
    if (view == "heap") {
        auto bytes = read_regular_file(base + ".heap", 1u << 30);
        return bytes ? binary(std::move(*bytes), "application/octet-stream", capture.stem + ".heap")
                     : failure(500, bytes.error());
    }
    stats::JestatOptions options;
    options.stats = base + ".stats.json";
    options.dump = base + ".heap";
    options.smaps = base + ".smaps";
    std::vector<std::string> notes; // none: the watcher writes the statistics alone
    auto report = stats::load_reconciliation(options, notes);
    if (!report) {
        return failure(500, report.error());
    }
    return text(200, stats::render(*report, stats::ReportFormat::text, capture.stem));
}

} // namespace

Response peaks_page(const Request& request) {
    auto [directory, prefix] = peaks_location();
    if (directory.empty()) {
        // The index links this page in every process: it says how to turn the watcher on.
        static constexpr std::string_view off =
            "no peak watcher runs in this process (the agent: HEAPKIT_PEAKS_DIR; the "
            "library: PeakWatcher::start)";
        if (request.method == "POST") {
            return text(409, std::string(off));
        }
        if (!request.query.empty()) {
            return text(404, std::string(off));
        }
        return html(fmt::format("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Heap "
                                "peaks</title></head><body>\n<h1>Heap peaks</h1>\n<p>{}.</p>\n"
                                "</body></html>\n",
                                escape_xml(off)));
    }
    if (request.method == "POST") {
        auto taken = request_peak_capture(demand_timeout_ms);
        return taken ? text(200, fmt::format("captured {}/{}", directory, *taken))
                     : failure(500, taken.error());
    }
    static constexpr std::array<std::string_view, 2> allowed = {"capture", "view"};
    auto query = parse_query("/debug/jemalloc/peaks", request.query, allowed);
    if (!query) {
        return failure(400, query.error());
    }
    std::vector<Capture> captures = list_captures(directory, prefix);
    auto view = query->find("view");
    auto named = query->find("capture");
    if (named == query->end()) {
        if (view == query->end()) {
            return html(list_page(directory, captures));
        }
        if (view->second != "growth" && view->second != "growth_table") {
            return text(400, "/debug/jemalloc/peaks: view is growth or growth_table without "
                             "capture=");
        }
        std::vector<std::string> paths;
        for (const Capture& capture : captures) {
            paths.push_back(directory + "/" + capture.stem + ".heap");
        }
        return view_of(std::move(paths),
                       view->second == "growth" ? ViewKind::flame_graph : ViewKind::folded, true,
                       "");
    }
    std::string name = view == query->end() ? "stats" : view->second;
    if (name != "pprof" && name != "svg" && name != "stats" && name != "heap") {
        return text(400, "/debug/jemalloc/peaks: view is pprof, svg, stats or heap");
    }
    for (const Capture& capture : captures) {
        if (capture.stem == named->second) {
            return capture_view(directory, capture, name);
        }
    }
    return text(404, fmt::format("/debug/jemalloc/peaks: no capture {} (the list: "
                                 "/debug/jemalloc/peaks)",
                                 named->second));
}

} // namespace heapkit::runtime
