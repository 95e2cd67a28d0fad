// SPDX-License-Identifier: MIT
// /metrics: every gauge of this process in Prometheus' text format: its memory
// (telemetry.hpp), the symbolizer's, jemalloc's reconciliation, the serving processes of
// its tree, its copies of jemalloc and the peak watcher's.
#pragma once

#include "heapkit/runtime/request.hpp"

namespace heapkit::runtime {

// GET /metrics: Prometheus text.
Response metrics(const Request& request);

} // namespace heapkit::runtime
