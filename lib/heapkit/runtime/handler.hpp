// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/runtime/request.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit::runtime {

struct HandlerOptions {
    size_t max_body = 1 << 20; // larger bodies get 413
    // Dumps and conversions (/pprof/heap, /pprof/symbol, /debug/pprof/heap*) served at
    // once; one more gets 503 with Retry-After at once. Each holds the dump, the profile
    // and the files it names open (README "Runtime library": memory and descriptors).
    unsigned max_conversions = 2;
    // POST /pprof/conf changes the profiler of the whole process (a rate that slows every
    // allocation, profiling off): off unless the service turns it on.
    bool allow_control = false;     // false: POST /pprof/conf answers 403
    bool allow_cpu_profiles = true; // false: the CPU profile pages answer 403
    // prof.reset:<lg_sample> below this is refused (403): sampling every 2^lg bytes slows
    // every allocation of the process. 0 allows any rate.
    size_t min_lg_sample = 10;
};

// Every page, in the order an index shows them.
std::vector<PageInfo> pages();

// Serves heap profiles of this process (see README "Runtime library"):
//   jeprof's protocol   GET /pprof/heap, GET|HEAD|POST /pprof/symbol, GET /pprof/cmdline
//   control             GET /pprof/conf, POST /pprof/conf?prof.active:true|false,
//                       POST /pprof/conf?prof.reset:<lg_sample>
//   Go style            GET /debug/pprof/heap[?symbolize=0][&threads=1][&sample=TYPE],
//                       GET /debug/pprof/heap.folded[?sample=TYPE][&threads=1],
//                       GET /debug/pprof/fragmentation[?symbolize=0] (HEAPKIT_FRAGMENTATION)
//   telemetry           GET /metrics (Prometheus text),
//                       GET /debug/jemalloc/stats[?format=text|html|json|svg] (jestat's report)
//   CPU profiles        GET /debug/pprof/profile?seconds=N[&frequency=HZ][&symbolize=0] (pprof),
//                       GET /pprof/profile?seconds=N (gperftools' format, for jeprof),
//                       GET /pprof/profile/report, /pprof/profile/flamegraph[?width=] (SVG)
//   heap, more          GET /debug/pprof/heap?seconds=N (delta), /debug/pprof/allocs,
//                       GET /pprof/heap/report, /pprof/heap/flamegraph[?width=] (SVG)
//   index               GET / and /debug/pprof/: HTML links to every page (pages())
// Errors: 403 profiling not enabled or not active, control disabled, a sampling rate
// under the floor or the fragmentation sample off; 404 unknown path, 405 wrong method,
// 400 malformed query or body or a sample type the process does not record, 409 a CPU
// profile asked for while another runs or in a process with a SIGPROF handler of its
// own, 413 body over max_body, 500 a dump or conversion that failed (with the reason),
// 503 (Retry-After) max_conversions busy, or a page whose window was cut short (the
// server stops, or its client has gone: a CPU profile ends, and frees the profiler, when
// its client closes the connection).
// Thread-safe; dumps are serialized. Copies share their conversion count.
class Handler {
public:
    explicit Handler(HandlerOptions options = {});
    Response handle(const Request& request) const;
    // True for a page that waits out a window of `seconds` (CPU profiles, heap deltas)
    // before it answers: a server should not answer it on a thread others need.
    static bool waits(const Request& request);

private:
    struct Shared;
    HandlerOptions m_options;
    std::shared_ptr<Shared> m_shared;
};

} // namespace heapkit::runtime
