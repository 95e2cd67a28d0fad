// SPDX-License-Identifier: MIT
// The Handler's CPU profile, heap delta and flame graph pages (handler.hpp lists them).
#pragma once

#include "heapkit/runtime/handler.hpp"

namespace heapkit::runtime {

// GET /debug/pprof/profile?seconds=N[&frequency=HZ][&symbolize=0]: gzipped pprof.
Response go_cpu_profile(const Request& request);
// GET /pprof/profile?seconds=N[&frequency=HZ]: gperftools' binary format, for jeprof.
Response jeprof_cpu_profile(const Request& request);
// GET /pprof/profile/report?seconds=&frequency=: PostHog's defaults (10 s, 200 Hz).
Response cpu_report(const Request& request);
// GET /pprof/profile/flamegraph?seconds=&frequency=&width=: an SVG flame graph.
Response cpu_flame_graph_page(const Request& request);

// True when a heap page is asked for a delta (?seconds=N given).
bool asks_delta(const Request& request);
// /debug/pprof/heap?seconds=N[&sample=TYPE][&symbolize=0]: the later of two dumps N
// seconds apart less the earlier, as gzipped pprof.
Response heap_delta(const Request& request);
// /debug/pprof/allocs: the heap request with alloc_space as the default sample type.
Request as_allocs(const Request& request);
// GET /pprof/heap/flamegraph?width=&sample=: the heap profile as an SVG flame graph.
Response heap_flame_graph_page(const Request& request);
// GET /debug/pprof/ui?sample=: the heap profile as heapfold --html's page (every
// sample type, Top, flame graph, callers and callees), without source excerpts.
Response heap_report_page(const Request& request);

} // namespace heapkit::runtime
