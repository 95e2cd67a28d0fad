// SPDX-License-Identifier: MIT
// /debug/jemalloc/stats and the waterfall's gauges on /metrics: jestat's reconciliation of
// this process's own figures (malloc_stats_print and /proc/self/smaps_rollup, read now).
#pragma once

#include "heapkit/runtime/mallctl.hpp"
#include "heapkit/runtime/request.hpp"
#include "heapkit/stats/reconcile.hpp"
#include "heapkit/util/error.hpp"

#include <string>
#include <string_view>

namespace heapkit::runtime {

// This process's figures reconciled: the statistics and smaps_rollup read now, and with
// `with_profile` a heap dump taken now when profiling is active (its in-use total starts
// the waterfall, as jestat --dump; too slow for every scrape). `jemalloc`: which copy
// (Request::jemalloc), empty for the one that holds the program's heap.
Result<stats::Reconciliation> reconcile_this_process(bool with_profile = false,
                                                     std::string_view jemalloc = {});

// GET /debug/jemalloc/stats[?format=text|html|json|svg]: the reconciliation as jestat prints
// it (html: the chart above the table). 400 for another format, 404 without jemalloc, 500 when its
// statistics cannot be read.
Response jemalloc_stats_page(const Request& request);

// Prometheus gauges, one per row: heapkit_jemalloc_waterfall_bytes{row="…"} and
// heapkit_rss_split_bytes{part="…"}. "" without jemalloc.
std::string jemalloc_stats_metrics();

} // namespace heapkit::runtime
