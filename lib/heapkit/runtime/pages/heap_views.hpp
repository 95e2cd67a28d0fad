// SPDX-License-Identifier: MIT
// The Handler's pages that look at the heap over a window or draw it: the delta of two
// dumps, /debug/pprof/allocs, the flame graph and heapfold's report (routes.cpp lists them).
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/runtime/request.hpp"

namespace heapkit::runtime {

// True when a heap page is asked for a delta (?seconds=N given).
bool asks_delta(const Request& request);
// /debug/pprof/heap?seconds=N[&sample=TYPE][&symbolize=0]: the later of two dumps N
// seconds apart less the earlier, as gzipped pprof.
Response heap_delta(const Request& request);
// /debug/pprof/allocs: the heap request with alloc_space as the default sample type.
Request as_allocs(const Request& request);
// GET /pprof/heap/flamegraph?width=&sample=: the heap profile as an SVG flame graph.
Response heap_flame_graph_page(const Request& request);
// `profile` drawn as an SVG flame graph: the answer of every page that draws one.
Response flame_graph_response(const Profile& profile, const FoldedOptions& folded,
                              const FlameOptions& flame);
// GET /debug/pprof/ui?sample=: the heap profile as heapfold --html's page (every
// sample type, Top, flame graph, callers and callees), without source excerpts.
Response heap_report_page(const Request& request);

} // namespace heapkit::runtime
