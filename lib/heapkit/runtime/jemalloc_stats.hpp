// SPDX-License-Identifier: MIT
// jemalloc's own statistics of this process, as its malloc_stats_print writes them: what
// the reconciliation page and /metrics read, and what a peak capture keeps.
#pragma once

#include "heapkit/runtime/mallctl.hpp"
#include "heapkit/util/error.hpp"

#include <string>

namespace heapkit::runtime {

// malloc_stats_print's JSON (option "J") of this process, written into a string through
// its write callback. An error when jemalloc (or its malloc_stats_print) is not loaded.
Result<std::string> print_jemalloc_stats(const Mallctl& mallctl);

} // namespace heapkit::runtime
