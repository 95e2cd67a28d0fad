// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace heapkit::runtime {

// An HTTP request as any server hands it over.
struct Request {
    std::string method; // "GET", "POST", "HEAD", ...
    std::string path;   // without the query: "/pprof/heap"
    std::string query;  // after '?', still percent-encoded
    std::map<std::string, std::string> headers;
    std::string body;
};

struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::map<std::string, std::string> headers; // besides Content-Type
    std::string body;
};

struct HandlerOptions {
    size_t max_body = 1 << 20; // larger bodies get 413
};

// Serves heap profiles of this process (see README "Runtime library"):
//   jeprof's protocol   GET /pprof/heap, GET|HEAD|POST /pprof/symbol, GET /pprof/cmdline
//   control             GET /pprof/conf, POST /pprof/conf?prof.active:true|false,
//                       POST /pprof/conf?prof.reset:<lg_sample>
//   Go style            GET /debug/pprof/heap[?symbolize=0][&threads=1][&sample=TYPE],
//                       GET /debug/pprof/heap.folded[?sample=TYPE][&threads=1]
//   telemetry           GET /metrics (Prometheus text)
//   CPU profiles        GET /debug/pprof/profile?seconds=N[&frequency=HZ][&symbolize=0] (pprof),
//                       GET /pprof/profile?seconds=N (gperftools' format, for jeprof),
//                       GET /pprof/profile/report, /pprof/profile/flamegraph[?width=] (SVG)
//   heap, more          GET /debug/pprof/heap?seconds=N (delta), /debug/pprof/allocs,
//                       GET /pprof/heap/report, /pprof/heap/flamegraph[?width=] (SVG)
// Errors: 403 profiling not enabled or not active, 404 unknown path, 405 wrong method,
// 400 malformed query or body, 413 body over max_body, 500 a dump that failed, 409 a CPU
// profile asked for while another runs.
// Thread-safe; dumps are serialized.
class Handler {
public:
    explicit Handler(HandlerOptions options = {})
        : m_options(options) {}
    Response handle(const Request& request) const;

private:
    HandlerOptions m_options;
};

} // namespace heapkit::runtime
