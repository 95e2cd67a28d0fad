// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit::runtime {

// An HTTP request as any server hands it over.
struct Request {
    std::string method; // "GET", "POST", "HEAD", ...
    std::string path;   // without the query: "/pprof/heap"
    std::string query;  // after '?', still percent-encoded
    std::map<std::string, std::string> headers;
    std::string body;
    // How a page that takes its time (a CPU profile, a heap delta: Handler::waits) waits
    // out its window; a server passes one that returns early when it stops. Unset: sleep.
    std::function<void(std::chrono::milliseconds)> wait;
    // True once the server stops or the client has gone (the window then ends early): a
    // page whose window was cut short answers 503 at once instead of converting what it
    // has (symbolizing takes ~0.1 s, which would delay the process's exit; a client that
    // has gone reads nothing). Unset: never.
    std::function<bool()> stopping;
    // Which copy of jemalloc a heap page is about, where a process has several (a Rust
    // service's own and a preloaded one): `?jemalloc=PREFIX` or the object's file name,
    // taken out of the query by the Handler (a page about the whole process answers 400 to
    // it). Empty: the copy that holds the program's heap.
    std::string jemalloc;
};

struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::map<std::string, std::string> headers; // besides Content-Type
    std::string body;
};

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

// One page the Handler serves, as an index lists it.
struct PageInfo {
    std::string_view path;
    std::string_view query; // the parameters it takes, "seconds=N&frequency=HZ"; may be empty
    std::string_view about; // one line for a person
};
// Every page, in the order an index shows them.
std::vector<PageInfo> pages();

// Serves heap profiles of this process (see README "Runtime library"):
//   jeprof's protocol   GET /pprof/heap, GET|HEAD|POST /pprof/symbol, GET /pprof/cmdline
//   control             GET /pprof/conf, POST /pprof/conf?prof.active:true|false,
//                       POST /pprof/conf?prof.reset:<lg_sample>
//   Go style            GET /debug/pprof/heap[?symbolize=0][&threads=1][&sample=TYPE],
//                       GET /debug/pprof/heap.folded[?sample=TYPE][&threads=1]
//   telemetry           GET /metrics (Prometheus text),
//                       GET /debug/jemalloc/stats[?format=text|html|json|svg] (jestat's report)
//   CPU profiles        GET /debug/pprof/profile?seconds=N[&frequency=HZ][&symbolize=0] (pprof),
//                       GET /pprof/profile?seconds=N (gperftools' format, for jeprof),
//                       GET /pprof/profile/report, /pprof/profile/flamegraph[?width=] (SVG)
//   heap, more          GET /debug/pprof/heap?seconds=N (delta), /debug/pprof/allocs,
//                       GET /pprof/heap/report, /pprof/heap/flamegraph[?width=] (SVG)
//   index               GET / and /debug/pprof/: HTML links to every page (pages())
// Errors: 403 profiling not enabled or not active, control disabled or a sampling rate
// under the floor; 404 unknown path, 405 wrong method, 400 malformed query or body or a
// sample type the process does not record, 409 a CPU profile asked for while another
// runs or in a process with a SIGPROF handler of its own, 413 body over max_body, 500 a
// dump or conversion that failed (with the reason), 503 (Retry-After) max_conversions
// busy, or a page whose window was cut short (the server stops, or its client has gone:
// a CPU profile ends, and frees the profiler, when its client closes the connection).
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
