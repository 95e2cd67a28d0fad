// SPDX-License-Identifier: MIT
// The Handler's allocation-log page (handler.hpp lists the pages).
#pragma once

#include "heapkit/runtime/request.hpp"

namespace heapkit::runtime {

// GET /debug/jemalloc/log?seconds=N[&format=pprof|text|svg|lifetimes][&sample=TYPE][&free_sites=1]
// [&symbolize=0][&width=PX]: jemalloc's allocation log of the next N seconds (prof.log_start
// into a private temporary directory, prof.log_stop, the file read and removed), answered
// as gzipped pprof with the log's sample types, the table per site, a flame graph of
// `sample` or the lifetime chart, placed in this process's own map. One at a time (409 while
// another runs).
Response jemalloc_log_page(const Request& request);

} // namespace heapkit::runtime
