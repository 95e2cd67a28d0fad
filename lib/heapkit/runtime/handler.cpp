// SPDX-License-Identifier: MIT
#include "heapkit/runtime/handler.hpp"

#include "heapkit/runtime/fragmentation_sampler.hpp"
#include "heapkit/runtime/pages/page_query.hpp"
#include "heapkit/runtime/pages/routes.hpp"
#include "heapkit/util/text.hpp"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

namespace heapkit::runtime {
namespace {
// Why a control request is not allowed by the options, if it is not.
std::optional<Response> refuse_control(const Request& request, const HandlerOptions& options) {
    bool control_page = request.path == "/pprof/conf" || request.path == "/debug/jemalloc/peaks";
    if (!control_page || request.method != "POST") {
        return std::nullopt;
    }
    if (!options.allow_control) {
        return text(403, "control is disabled in this process (HandlerOptions::allow_control; "
                         "the agent: HEAPKIT_CONTROL=1)");
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

// The request with its `jemalloc=` pair, if any, moved out of the query into
// Request::jemalloc: every heap page takes it, none has to list it.
Request choosing_copy(const Request& request) {
    Request chosen = request;
    std::string kept;
    std::string_view rest = request.query;
    while (!rest.empty()) {
        std::string_view pair = rest.substr(0, rest.find('&'));
        rest.remove_prefix(std::min(rest.size(), pair.size() + 1));
        if (pair.starts_with("jemalloc=")) {
            auto value = percent_decode(pair.substr(9));
            chosen.jemalloc = value ? *value : std::string(pair.substr(9));
            continue;
        }
        kept += kept.empty() ? "" : "&";
        kept += pair;
    }
    chosen.query = std::move(kept);
    return chosen;
}

// The pages about one copy of jemalloc's heap, which take `jemalloc=`; every other page is
// about the process, and refuses it rather than answer as if it had been heard.
bool takes_copy(std::string_view path) {
    static constexpr std::string_view pages[] = {"/debug/pprof/heap",
                                                 "/debug/pprof/allocs",
                                                 "/debug/pprof/heap.folded",
                                                 "/pprof/heap",
                                                 "/pprof/conf",
                                                 "/pprof/heap/report",
                                                 "/pprof/heap/flamegraph",
                                                 "/debug/pprof/ui",
                                                 "/debug/jemalloc/stats",
                                                 "/debug/jemalloc/log"};
    return std::find(std::begin(pages), std::end(pages), path) != std::end(pages);
}

// Sleeps `window` through the server's wait (cut short when it stops), or plainly.
void pause(const Request& request, std::chrono::milliseconds window) {
    if (request.wait) {
        request.wait(window);
    } else {
        std::this_thread::sleep_for(window);
    }
}

// One of max_conversions, held from claim() to the end of the scope.
class ConversionSlot {
public:
    ConversionSlot(std::atomic<unsigned>& busy, unsigned max)
        : m_busy(busy)
        , m_max(max) {}
    ~ConversionSlot() {
        if (m_held) {
            --m_busy;
        }
    }
    ConversionSlot(const ConversionSlot&) = delete;
    ConversionSlot& operator=(const ConversionSlot&) = delete;

    bool claim() {
        if (!m_held && m_busy.fetch_add(1) >= m_max) {
            --m_busy;
            return false;
        }
        m_held = true;
        return true;
    }

private:
    std::atomic<unsigned>& m_busy;
    unsigned m_max;
    bool m_held = false;
};

} // namespace

struct Handler::Shared {
    std::atomic<unsigned> conversions{0};
};

Handler::Handler(HandlerOptions options)
    : m_options(options)
    , m_shared(std::make_shared<Shared>()) {
    start_fragmentation_from_environment();
}

bool Handler::waits(const Request& request) {
    const Route* route = find_route(request.path);
    return route != nullptr && route_waits(*route, request);
}

Response Handler::handle(const Request& asked) const {
    std::optional<Request> chosen;
    if (asked.query.find("jemalloc=") != std::string::npos) {
        chosen = choosing_copy(asked);
    }
    const Request& request = chosen ? *chosen : asked;
    if (!request.jemalloc.empty() && !takes_copy(request.path)) {
        return text(400, fmt::format("{} is about the process, not one copy of jemalloc: it "
                                     "takes no jemalloc=",
                                     request.path));
    }
    const Route* route = find_route(request.path);
    if (route == nullptr) {
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
    if (route->cpu_profile && !m_options.allow_cpu_profiles) {
        return text(403, "CPU profiles are disabled in this process (allow_cpu_profiles)");
    }
    if (!counts_as_conversion(*route, request)) {
        return route->serve(request);
    }
    ConversionSlot slot(m_shared->conversions, m_options.max_conversions);
    if (route_waits(*route, request)) {
        // A heap delta takes its first dump, waits out its window, then dumps again and
        // converts: it takes a slot after the wait, not for it (two deltas of 300 s would
        // refuse every heap page that long). On its own thread, it waits for a slot as
        // long as it takes one to free (a minute at most: then it converts regardless,
        // rather than never answer where max_conversions is 0).
        Request delta = request;
        delta.wait = [&slot, &request](std::chrono::milliseconds window) {
            pause(request, window);
            auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
            while (!slot.claim() && !(request.stopping && request.stopping()) &&
                   std::chrono::steady_clock::now() < give_up) {
                pause(request, std::chrono::milliseconds(20));
            }
        };
        return route->serve(delta);
    }
    // Refused at once rather than queued: a waiting request would hold a server thread.
    if (!slot.claim()) {
        Response response = text(503, fmt::format("{} profile requests are being served; "
                                                  "try again",
                                                  m_options.max_conversions));
        // emplace, not operator[] = "1": GCC 12 warns falsely (-Wrestrict) once inlined here.
        response.headers.emplace("Retry-After", "1");
        return response;
    }
    return route->serve(request);
}

std::vector<PageInfo> pages() {
    return listed_pages();
}

} // namespace heapkit::runtime
