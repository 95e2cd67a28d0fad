// SPDX-License-Identifier: MIT
// /debug/jemalloc/peaks: the peak watcher's captures, each as pprof, a flame graph and
// jestat's explanation, and the growth over all of them; POST (with control) takes one now.
#pragma once

#include "heapkit/runtime/request.hpp"

namespace heapkit::runtime {

// GET: an HTML table of the captures (without a watcher: a page saying how to start one;
// 404 for the views, 409 for POST);
// GET ?capture=STEM&view=pprof|svg|stats|heap: one capture (404 for a stem not listed);
// GET ?view=growth|growth_table: heapfold --growth over the captures (SVG, or the table);
// POST: a capture now (HandlerOptions::allow_control), its name, or 500 and why not.
Response peaks_page(const Request& request);

} // namespace heapkit::runtime
