// SPDX-License-Identifier: MIT
// The Handler's CPU profile pages: pprof, gperftools' format, and a flame graph
// (routes.cpp lists them).
#pragma once

#include "heapkit/runtime/request.hpp"

namespace heapkit::runtime {

// GET /debug/pprof/profile?seconds=N[&frequency=HZ][&symbolize=0]: gzipped pprof.
Response go_cpu_profile(const Request& request);
// GET /pprof/profile?seconds=N[&frequency=HZ]: gperftools' binary format, for jeprof.
Response jeprof_cpu_profile(const Request& request);
// GET /pprof/profile/report?seconds=&frequency=: PostHog's defaults (10 s, 200 Hz).
Response cpu_report(const Request& request);
// GET /pprof/profile/flamegraph?seconds=&frequency=&width=: an SVG flame graph.
Response cpu_flame_graph_page(const Request& request);

} // namespace heapkit::runtime
