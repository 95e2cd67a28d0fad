// SPDX-License-Identifier: MIT
#include "heapkit/runtime/handler.hpp"

#include "heapkit/runtime/export.hpp"
#include "heapkit/runtime/jemalloc_stats_page.hpp"
#include "heapkit/runtime/page_query.hpp"
#include "heapkit/runtime/profile_routes.hpp"
#include "heapkit/runtime/profiler.hpp"
#include "heapkit/runtime/telemetry.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/text.hpp"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>
#include <functional>
#include <set>
#include <vector>

namespace heapkit::runtime {
namespace {

Result<Profiler> active_profiler() {
    return Profiler::find().and_then(
        [](Profiler profiler) { return profiler.require_active().map([&] { return profiler; }); });
}

// alloc_* values exist only when jemalloc counts freed memory too (opt.prof_accum): the
// request is refused for that reason alone, not for a dump that happens to be empty.
Result<void> records_accumulated(SampleType sample) {
    if (!needs_accum(sample)) {
        return {};
    }
    auto mallctl = Mallctl::find();
    auto accum = mallctl ? mallctl->read<bool>("opt.prof_accum") : Result<bool>(false);
    if (!accum || !*accum) {
        return fail("{} needs accumulated counts: start the process with "
                    "MALLOC_CONF=prof_accum:true",
                    name_of(sample));
    }
    return {};
}

// A dump that failed: 403 when profiling was switched off meanwhile (a POST /pprof/conf
// between the check and the dump), else the server's failure.
Response dump_failure(const Profiler& profiler, const Error& error) {
    auto active = profiler.require_active();
    return active ? failure(500, error) : failure(403, active.error());
}

Response raw_heap() {
    auto profiler = active_profiler();
    if (!profiler) {
        return failure(403, profiler.error());
    }
    auto dump = profiler->dump();
    return dump ? text(200, std::move(*dump)) : dump_failure(*profiler, dump.error());
}

Response symbol(const Request& request) {
    if (request.method != "POST") {
        return text(200, "num_symbols: 1"); // jeprof only checks that this is positive
    }
    std::vector<uint64_t> addresses;
    std::string_view body = request.body;
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) {
        body.remove_suffix(1);
    }
    while (!body.empty()) {
        size_t plus = body.find('+');
        std::string_view one = body.substr(0, plus);
        body.remove_prefix(plus == std::string_view::npos ? body.size() : plus + 1);
        auto address = take_hex(one);
        if (!address || !one.empty()) {
            return text(400, "expected 0x<hex> addresses joined by '+'");
        }
        addresses.push_back(*address);
    }
    auto lines = symbol_lines(addresses);
    return lines ? text(200, std::move(*lines)) : failure(500, lines.error());
}

Response cmdline() {
    auto input = read_input("/proc/self/cmdline");
    if (!input) {
        return failure(500, input.error());
    }
    std::string lines = input->bytes;
    std::replace(lines.begin(), lines.end(), '\0', '\n');
    return text(200, std::move(lines));
}

Response conf_state(const Profiler& profiler) {
    auto active = profiler.active();
    auto lg_sample = profiler.lg_sample();
    if (!active || !lg_sample) {
        return failure(500, active ? lg_sample.error() : active.error());
    }
    return text(200, fmt::format("prof.active:{},prof.lg_sample:{}", *active, *lg_sample));
}

Response conf(const Request& request) {
    auto profiler = Profiler::find();
    if (!profiler) {
        return failure(403, profiler.error());
    }
    auto enabled = profiler->enabled();
    if (!enabled || !*enabled) {
        return text(403, "heap profiling is not enabled: start the process with "
                         "MALLOC_CONF=prof:true");
    }
    if (request.method == "GET") {
        return conf_state(*profiler);
    }
    auto setting = percent_decode(request.query);
    std::string_view value = setting ? std::string_view(*setting) : std::string_view();
    Result<void> done = fail("expected ?prof.active:true|false or ?prof.reset:<lg_sample>");
    // take_literal leaves `value` as it was when the prefix is not there.
    if (take_literal(value, "prof.active:")) {
        if (value == "true" || value == "false") {
            done = profiler->set_active(value == "true");
        }
    } else if (take_literal(value, "prof.reset:")) {
        auto lg = take_decimal(value);
        if (lg && value.empty() && *lg < 64) {
            done = profiler->reset(static_cast<size_t>(*lg));
        }
    }
    if (!done) {
        return failure(400, done.error());
    }
    return conf_state(*profiler);
}

Response go_heap(const Request& request, bool folded) {
    static constexpr std::string_view keys[] = {"symbolize", "threads", "sample"};
    auto query = parse_query(request.path, request.query, keys);
    if (!query) {
        return text(400, "query takes symbolize=0|1, threads=0|1, sample=TYPE");
    }
    auto symbolized = query_flag(*query, "symbolize", true);
    auto threads = query_flag(*query, "threads", false);
    auto sample = query->count("sample") ? parse_sample_type(query->at("sample"))
                                         : std::optional(SampleType::inuse_space);
    if (!symbolized || !threads || !sample) {
        return text(400, "query takes symbolize=0|1, threads=0|1, "
                         "sample=inuse_space|inuse_objects|alloc_space|alloc_objects");
    }
    auto profiler = active_profiler();
    if (!profiler) {
        return failure(403, profiler.error());
    }
    if (auto accum = records_accumulated(*sample); !accum) {
        return failure(400, accum.error());
    }
    auto dump = profiler->dump();
    if (!dump) {
        return dump_failure(*profiler, dump.error());
    }
    LoadOptions options;
    options.sample = *sample;
    options.per_thread = *threads;
    options.symbols.names = *symbolized;
    auto body = folded ? folded_from_dump(*dump, options) : pprof_from_dump(*dump, options);
    if (!body) {
        return failure(500, body.error());
    }
    if (folded) {
        return text(200, std::move(*body));
    }
    return binary(std::move(*body), "application/octet-stream", "heap.pb.gz");
}

Response metrics() {
    auto mallctl = Mallctl::find();
    Response response = text(200, to_prometheus(read_telemetry(mallctl ? &*mallctl : nullptr)) +
                                      symbolizer_metrics() + jemalloc_stats_metrics());
    response.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return response;
}

struct Route {
    std::string_view path;
    std::vector<std::string_view> methods;
    std::function<Response(const Request&)> serve;
};

const std::vector<Route>& routes() {
    static const std::vector<Route> table = {
        {"/pprof/heap", {"GET", "HEAD"}, [](const Request&) { return raw_heap(); }},
        {"/pprof/symbol", {"GET", "HEAD", "POST"}, symbol},
        {"/pprof/cmdline", {"GET", "HEAD"}, [](const Request&) { return cmdline(); }},
        {"/pprof/conf", {"GET", "POST"}, conf},
        {"/debug/pprof/heap",
         {"GET", "HEAD"},
         [](const Request& r) { return asks_delta(r) ? heap_delta(r) : go_heap(r, false); }},
        {"/debug/pprof/allocs",
         {"GET", "HEAD"},
         [](const Request& r) {
             Request allocs = as_allocs(r);
             return asks_delta(allocs) ? heap_delta(allocs) : go_heap(allocs, false);
         }},
        {"/debug/pprof/profile", {"GET"}, go_cpu_profile},
        {"/pprof/profile", {"GET"}, jeprof_cpu_profile},
        {"/pprof/profile/report", {"GET"}, cpu_report},
        {"/pprof/profile/flamegraph", {"GET"}, cpu_flame_graph_page},
        {"/pprof/heap/report", {"GET", "HEAD"}, [](const Request& r) { return go_heap(r, false); }},
        {"/pprof/heap/flamegraph", {"GET", "HEAD"}, heap_flame_graph_page},
        {"/debug/pprof/heap.folded",
         {"GET", "HEAD"},
         [](const Request& r) { return go_heap(r, true); }},
        {"/metrics", {"GET", "HEAD"}, [](const Request&) { return metrics(); }},
        {"/debug/jemalloc/stats", {"GET", "HEAD"}, jemalloc_stats_page},
    };
    return table;
}

// The routes that dump and convert: each holds a dump and a profile (a heap delta holds
// the first for its whole window). CPU profiles are not counted here: one runs at a time.
bool is_conversion(const Request& request) {
    static const std::set<std::string_view> heap_pages = {
        "/pprof/heap",         "/debug/pprof/heap",  "/debug/pprof/heap.folded",
        "/debug/pprof/allocs", "/pprof/heap/report", "/pprof/heap/flamegraph"};
    return heap_pages.count(request.path) != 0 ||
           (request.path == "/pprof/symbol" && request.method == "POST");
}

bool is_cpu_profile(const Request& request) {
    return request.path == "/debug/pprof/profile" || request.path.starts_with("/pprof/profile");
}

// Why a control request is not allowed by the options, if it is not.
std::optional<Response> refuse_control(const Request& request, const HandlerOptions& options) {
    if (request.path != "/pprof/conf" || request.method != "POST") {
        return std::nullopt;
    }
    if (!options.allow_control) {
        return text(403, "control is disabled in this process (allow_control)");
    }
    auto setting = percent_decode(request.query);
    std::string_view value = setting ? std::string_view(*setting) : std::string_view();
    if (take_literal(value, "prof.reset:")) {
        auto lg = take_decimal(value);
        if (lg && value.empty() && *lg < options.min_lg_sample) {
            return text(403, fmt::format("prof.reset:{} refused: sampling more often than every "
                                         "2^{} bytes slows every allocation (min_lg_sample)",
                                         *lg, options.min_lg_sample));
        }
    }
    return std::nullopt;
}

} // namespace

struct Handler::Shared {
    std::atomic<unsigned> conversions{0};
};

Handler::Handler(HandlerOptions options)
    : m_options(options)
    , m_shared(std::make_shared<Shared>()) {}

bool Handler::waits(const Request& request) {
    bool heap_window =
        (request.path == "/debug/pprof/heap" || request.path == "/debug/pprof/allocs") &&
        asks_delta(request);
    return heap_window || is_cpu_profile(request);
}

Response Handler::handle(const Request& request) const {
    auto route = std::find_if(routes().begin(), routes().end(),
                              [&](const Route& r) { return r.path == request.path; });
    if (route == routes().end()) {
        return text(404, fmt::format("no such page: {}", request.path));
    }
    if (std::find(route->methods.begin(), route->methods.end(), request.method) ==
        route->methods.end()) {
        Response response =
            text(405, fmt::format("{} does not take {}", request.path, request.method));
        response.headers["Allow"] = fmt::format("{}", fmt::join(route->methods, ", "));
        return response;
    }
    if (request.body.size() > m_options.max_body) {
        return text(413, fmt::format("request body over {} bytes", m_options.max_body));
    }
    if (auto refusal = refuse_control(request, m_options)) {
        return *refusal;
    }
    if (!is_conversion(request)) {
        return route->serve(request);
    }
    // Refused at once rather than queued: a waiting request would hold a server thread.
    std::atomic<unsigned>& busy = m_shared->conversions;
    if (busy.fetch_add(1) >= m_options.max_conversions) {
        --busy;
        Response response = text(503, fmt::format("{} profile requests are being served; "
                                                  "try again",
                                                  m_options.max_conversions));
        response.headers["Retry-After"] = "1";
        return response;
    }
    struct Release {
        std::atomic<unsigned>& busy;
        ~Release() { --busy; }
    } release{busy};
    return route->serve(request);
}

} // namespace heapkit::runtime
