// SPDX-License-Identifier: MIT
#include "heapkit/runtime/pages/routes.hpp"

#include "heapkit/runtime/pages/cpu_pages.hpp"
#include "heapkit/runtime/pages/fragmentation_page.hpp"
#include "heapkit/runtime/pages/heap_pages.hpp"
#include "heapkit/runtime/pages/heap_views.hpp"
#include "heapkit/runtime/pages/index_page.hpp"
#include "heapkit/runtime/pages/jemalloc_stats_page.hpp"
#include "heapkit/runtime/pages/log_page.hpp"
#include "heapkit/runtime/pages/metrics_page.hpp"
#include "heapkit/runtime/pages/peaks_page.hpp"

#include <algorithm>

namespace heapkit::runtime {
namespace {

Response go_or_delta(const Request& request) {
    return asks_delta(request) ? heap_delta(request) : go_heap(request, false);
}

} // namespace

// Never destroyed: a server thread may still answer while the process exits. Made on
// first use, on a server thread: nothing of it is allocated while the library loads, on
// the host's thread, where it would stay in the host's heap profile.
const std::vector<Route>& routes() {
    static const auto* table = [] {
        const std::vector<std::string_view> get{"GET", "HEAD"};
        return new std::vector<Route>{
            {"/", get, Converts::never, Waits::never, false, "", "this index",
             [](const Request&) { return index_page("/", listed_pages()); }},
            {"/debug/pprof/", get, Converts::never, Waits::never, false, "",
             "the index of the Go-style pages",
             [](const Request&) { return index_page("/debug/pprof/", listed_pages()); }},
            {"/debug/pprof/heap", get, Converts::always, Waits::for_seconds, false,
             "sample=inuse_space|inuse_objects|alloc_space|alloc_objects&symbolize=0|1&threads=0|1"
             "&seconds=N",
             "live heap as gzipped pprof (go tool pprof, Pyroscope, Parca); seconds=N: the growth "
             "over N seconds",
             go_or_delta},
            {"/debug/pprof/allocs", get, Converts::always, Waits::for_seconds, false,
             "sample=TYPE&symbolize=0|1&threads=0|1&seconds=N",
             "the heap profile with alloc_space first (needs MALLOC_CONF=prof_accum:true)",
             [](const Request& r) { return go_or_delta(as_allocs(r)); }},
            {"/debug/pprof/profile",
             {"GET"},
             Converts::never,
             Waits::always,
             true,
             "seconds=30&frequency=100&symbolize=0|1",
             "CPU profile as gzipped pprof over the next seconds=N",
             go_cpu_profile},
            {"/debug/pprof/heap.folded", get, Converts::always, Waits::never, false,
             "sample=TYPE&threads=0|1", "live heap as collapsed stacks (flamegraph.pl, speedscope)",
             [](const Request& r) { return go_heap(r, true); }},
            {"/debug/pprof/fragmentation", get, Converts::always, Waits::never, false,
             "symbolize=0|1&format=pprof|svg&width=1200",
             "which stacks' live objects hold the free bytes of partly used slabs, exact "
             "(gzipped pprof, or a flame graph; needs HEAPKIT_FRAGMENTATION=1)",
             fragmentation_profile},
            {"/pprof/heap", get, Converts::always, Waits::never, false, "",
             "jemalloc's raw heap dump (jeprof http://HOST:PORT/pprof/heap)", raw_heap},
            {"/pprof/symbol",
             {"GET", "HEAD", "POST"},
             Converts::on_post,
             Waits::never,
             false,
             "",
             "jeprof's symbol lookup (POST 0xADDR+0xADDR...)",
             symbol},
            {"/pprof/cmdline", get, Converts::never, Waits::never, false, "",
             "this process's command line", cmdline},
            {"/pprof/conf",
             {"GET", "POST"},
             Converts::never,
             Waits::never,
             false,
             "prof.active:true|false or prof.reset:LG_SAMPLE",
             "profiler state; POST changes it (when control is allowed)",
             conf},
            {"/pprof/profile",
             {"GET"},
             Converts::never,
             Waits::always,
             true,
             "seconds=30&frequency=100",
             "CPU profile in gperftools' format, for jeprof",
             jeprof_cpu_profile},
            {"/pprof/profile/report",
             {"GET"},
             Converts::never,
             Waits::always,
             true,
             "seconds=10&frequency=200&symbolize=0|1",
             "CPU profile as gzipped pprof, PostHog's defaults",
             cpu_report},
            {"/pprof/profile/flamegraph",
             {"GET"},
             Converts::never,
             Waits::always,
             true,
             "seconds=10&frequency=200&width=1200",
             "CPU flame graph (SVG)",
             cpu_flame_graph_page},
            {"/pprof/heap/report", get, Converts::always, Waits::never, false,
             "sample=TYPE&symbolize=0|1&threads=0|1", "live heap as gzipped pprof",
             [](const Request& r) { return go_heap(r, false); }},
            {"/pprof/heap/flamegraph", get, Converts::always, Waits::never, false,
             "sample=TYPE&width=1200", "heap flame graph (SVG)", heap_flame_graph_page},
            {"/debug/pprof/ui", get, Converts::always, Waits::never, false, "sample=TYPE",
             "live heap as one interactive page (heapfold --html's: Top, flame graph, callers)",
             heap_report_page},
            {"/metrics", get, Converts::never, Waits::never, false, "",
             "jemalloc's and the runtime's gauges, Prometheus text", metrics},
            {"/debug/jemalloc/log",
             {"GET"},
             Converts::never,
             Waits::always,
             false,
             "seconds=10&format=pprof|text|svg|lifetimes&sample=TYPE&free_sites=0|1&symbolize=0|1&"
             "width=1200",
             "what churns: jemalloc's allocation log over the next seconds=N (lifetimes, "
             "temporaries, cross-thread frees)",
             jemalloc_log_page},
            {"/debug/jemalloc/stats", get, Converts::never, Waits::never, false,
             "format=text|html|json|svg",
             "why RSS is bigger than the heap profile: jemalloc's statistics reconciled",
             jemalloc_stats_page},
            {"/debug/jemalloc/peaks",
             {"GET", "HEAD", "POST"},
             Converts::always,
             Waits::never,
             false,
             "capture=NAME&view=pprof|svg|stats|heap or view=growth|growth_table",
             "the heap at its peaks and before the OOM killer: the peak watcher's captures "
             "(POST: one now, when control is allowed)",
             peaks_page},
        };
    }();
    return *table;
}

std::vector<PageInfo> listed_pages() {
    std::vector<PageInfo> all;
    for (const Route& route : routes()) {
        all.push_back({route.path, route.query, route.about});
    }
    return all;
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
