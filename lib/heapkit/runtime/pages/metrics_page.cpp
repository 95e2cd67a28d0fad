// SPDX-License-Identifier: MIT
#include "heapkit/runtime/pages/metrics_page.hpp"

#include "heapkit/runtime/export/export.hpp"
#include "heapkit/runtime/guest/serving_processes.hpp"
#include "heapkit/runtime/mallctl.hpp"
#include "heapkit/runtime/pages/jemalloc_stats_page.hpp"
#include "heapkit/runtime/peaks/peak_watcher.hpp"
#include "heapkit/runtime/telemetry.hpp"

#include <fmt/format.h>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit::runtime {

namespace {

// A label value as Prometheus' text format spells it: backslash, quote and newline escaped.
std::string prometheus_label(std::string_view value) {
    std::string spelled;
    for (char c : value) {
        if (c == '\\' || c == '"') {
            spelled += '\\';
            spelled += c;
        } else if (c == '\n') {
            spelled += "\\n";
        } else {
            spelled += c;
        }
    }
    return spelled;
}

// One series per serving process of the tree (the agent's forked children), so that a
// scrape of the first process says where the others are.
std::string serving_metrics() {
    std::vector<ServingProcess> processes = serving_processes();
    if (processes.empty()) {
        return "";
    }
    std::string text = "# HELP heapkit_agent_serving A process of this tree that serves its "
                       "own profiles, at url.\n# TYPE heapkit_agent_serving gauge\n";
    for (const ServingProcess& process : processes) {
        text += fmt::format("heapkit_agent_serving{{pid=\"{}\",role=\"{}\",name=\"{}\","
                            "url=\"{}\"}} 1\n",
                            process.pid, prometheus_label(process.role),
                            prometheus_label(process.name), prometheus_label(process.url));
    }
    return text;
}

// One series per copy of jemalloc in the process: where it is, its prefix and variable,
// and whether the heap pages show it (served) or it is never called (unused).
std::string jemalloc_copy_metrics() {
    const JemallocCopies& copies = jemalloc_copies();
    if (copies.count == 0) {
        return "";
    }
    std::string text = "# HELP heapkit_jemalloc_copy A copy of jemalloc in this process; "
                       "served=1: the one the heap pages show.\n# TYPE heapkit_jemalloc_copy "
                       "gauge\n";
    for (int i = 0; i < copies.count; ++i) {
        const JemallocCopy& copy = copies.copies[i];
        char variable[32];
        conf_variable(copy.prefix, variable, sizeof(variable));
        text += fmt::format("heapkit_jemalloc_copy{{object=\"{}\",prefix=\"{}\",variable=\"{}\","
                            "linked=\"{}\",served=\"{}\",unused=\"{}\"}} 1\n",
                            prometheus_label(copy.object), prometheus_label(copy.prefix), variable,
                            copy.in_executable ? "static" : "shared", i == copies.serving ? 1 : 0,
                            is_unused(copy) ? 1 : 0);
    }
    return text;
}

} // namespace

Response metrics(const Request&) {
    auto mallctl = Mallctl::find();
    Response response =
        text(200, to_prometheus(read_telemetry(mallctl ? &*mallctl : nullptr)) +
                      symbolizer_metrics() + jemalloc_stats_metrics() + serving_metrics() +
                      jemalloc_copy_metrics() + peaks_metrics());
    response.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return response;
}

} // namespace heapkit::runtime
