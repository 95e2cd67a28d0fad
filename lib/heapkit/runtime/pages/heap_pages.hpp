// SPDX-License-Identifier: MIT
// The Handler's pages for jeprof's protocol, profiler control and Go's heap pages
// (routes.cpp lists them with their facts).
#pragma once

#include "heapkit/runtime/request.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace heapkit::runtime {

// GET /pprof/heap: jemalloc's raw dump, for jeprof.
Response raw_heap(const Request& request);
// GET /pprof/symbol: "num_symbols: 1"; POST: the names of '+'-joined addresses.
Response symbol(const Request& request);
// The addresses of a POST /pprof/symbol body ("0x1a2b+0x3c4d", a newline allowed at the
// end); nullopt for anything else (tests/fuzz/symbol_body.cpp).
std::optional<std::vector<uint64_t>> symbol_addresses(std::string_view body);
// GET /pprof/cmdline: the command line, one argument a line.
Response cmdline(const Request& request);
// GET /pprof/conf: the profiler's state; POST ?prof.active:BOOL or ?prof.reset:LG.
Response conf(const Request& request);
// GET /debug/pprof/heap (and the pages built on it): gzipped pprof, or with `folded`
// collapsed stacks.
Response go_heap(const Request& request, bool folded);

} // namespace heapkit::runtime
