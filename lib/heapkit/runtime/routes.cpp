// SPDX-License-Identifier: MIT
#include "heapkit/runtime/routes.hpp"

#include "heapkit/runtime/heap_pages.hpp"
#include "heapkit/runtime/jemalloc_stats_page.hpp"
#include "heapkit/runtime/profile_routes.hpp"

#include <algorithm>

namespace heapkit::runtime {
namespace {

const std::vector<std::string_view> get{"GET", "HEAD"};

Response go_or_delta(const Request& request) {
    return asks_delta(request) ? heap_delta(request) : go_heap(request, false);
}

} // namespace

const std::vector<Route>& routes() {
    static const std::vector<Route> table = {
        {"/debug/pprof/heap", get, Converts::always, Waits::for_seconds,
         "seconds=N&sample=TYPE&symbolize=0|1&threads=0|1",
         "the heap as gzipped pprof (with seconds: what changed over them)", go_or_delta},
        {"/debug/pprof/allocs", get, Converts::always, Waits::for_seconds,
         "seconds=N&sample=TYPE&symbolize=0|1&threads=0|1",
         "the heap with alloc_space as its default sample type",
         [](const Request& r) { return go_or_delta(as_allocs(r)); }},
        {"/debug/pprof/heap.folded", get, Converts::always, Waits::never, "sample=TYPE&threads=0|1",
         "the heap as collapsed stacks (flamegraph.pl's input)",
         [](const Request& r) { return go_heap(r, true); }},
        {"/debug/pprof/profile",
         {"GET"},
         Converts::never,
         Waits::always,
         "seconds=N&frequency=HZ&symbolize=0|1",
         "a CPU profile as gzipped pprof",
         go_cpu_profile},
        {"/pprof/heap/flamegraph", get, Converts::always, Waits::never, "width=PX&sample=TYPE",
         "the heap as an SVG flame graph", heap_flame_graph_page},
        {"/pprof/heap/report", get, Converts::always, Waits::never,
         "sample=TYPE&symbolize=0|1&threads=0|1", "the heap as gzipped pprof",
         [](const Request& r) { return go_heap(r, false); }},
        {"/pprof/profile/flamegraph",
         {"GET"},
         Converts::never,
         Waits::always,
         "seconds=N&frequency=HZ&width=PX",
         "a CPU profile as an SVG flame graph",
         cpu_flame_graph_page},
        {"/pprof/profile/report",
         {"GET"},
         Converts::never,
         Waits::always,
         "seconds=N&frequency=HZ",
         "a CPU profile as gzipped pprof (10 s at 200 Hz)",
         cpu_report},
        {"/pprof/heap", get, Converts::always, Waits::never, "",
         "jemalloc's raw dump (jeprof's protocol)", raw_heap},
        {"/pprof/profile",
         {"GET"},
         Converts::never,
         Waits::always,
         "seconds=N&frequency=HZ",
         "a CPU profile in gperftools' format (jeprof's protocol)",
         jeprof_cpu_profile},
        {"/pprof/symbol",
         {"GET", "HEAD", "POST"},
         Converts::on_post,
         Waits::never,
         "",
         "names of POSTed addresses (jeprof's protocol)",
         symbol},
        {"/pprof/cmdline", get, Converts::never, Waits::never, "",
         "the command line (jeprof's protocol)", cmdline},
        {"/pprof/conf",
         {"GET", "POST"},
         Converts::never,
         Waits::never,
         "prof.active:true|false or prof.reset:LG (POST)",
         "the profiler's state and control",
         conf},
        {"/metrics", get, Converts::never, Waits::never, "", "telemetry, Prometheus' text format",
         metrics},
        {"/debug/jemalloc/stats", get, Converts::never, Waits::never, "format=text|html|json|svg",
         "why RSS is bigger than the heap profile: jemalloc's statistics reconciled",
         jemalloc_stats_page},
    };
    return table;
}

const Route* find_route(std::string_view path) {
    auto found = std::find_if(routes().begin(), routes().end(),
                              [&](const Route& route) { return route.path == path; });
    return found == routes().end() ? nullptr : &*found;
}

bool counts_as_conversion(const Route& route, const Request& request) {
    switch (route.converts) {
    case Converts::never:
        return false;
    case Converts::always:
        return true;
    case Converts::on_post:
        return request.method == "POST";
    }
    return false;
}

bool route_waits(const Route& route, const Request& request) {
    switch (route.waits) {
    case Waits::never:
        return false;
    case Waits::always:
        return true;
    case Waits::for_seconds:
        return asks_delta(request);
    }
    return false;
}

} // namespace heapkit::runtime
