// SPDX-License-Identifier: MIT
#include "heapkit/runtime/pages/cpu_pages.hpp"

#include "heapkit/runtime/cpu/cpu_export.hpp"
#include "heapkit/runtime/pages/page_query.hpp"
#include "heapkit/util/try.hpp"

#include <fmt/format.h>
#include <map>
#include <optional>
#include <thread>
#include <unistd.h>
#include <utility>

namespace heapkit::runtime {
namespace {

constexpr std::string_view cpu_keys[] = {"seconds", "frequency", "symbolize", "width", "debug"};

struct CpuRequest {
    unsigned seconds = 30;
    unsigned frequency = 100;
    bool names = true;
    unsigned width = 1200;
};

struct CpuDefaults {
    unsigned seconds;
    unsigned frequency;
};

Result<CpuRequest> parse_cpu(const Request& request, CpuDefaults defaults) {
    HEAPKIT_TRY_ASSIGN(auto query, parse_query(request.path, request.query, cpu_keys));
    CpuRequest cpu;
    HEAPKIT_TRY_ASSIGN(cpu.seconds,
                       query_number(query, "seconds", defaults.seconds, 1, max_window_seconds));
    HEAPKIT_TRY_ASSIGN(cpu.frequency,
                       query_number(query, "frequency", defaults.frequency, 1, max_cpu_frequency));
    HEAPKIT_TRY_ASSIGN(cpu.names, query_flag(query, "symbolize", true));
    HEAPKIT_TRY_ASSIGN(cpu.width,
                       query_number(query, "width", 1200, FlameOptions::min_width, 20000));
    HEAPKIT_TRY(query_debug(
        query, "As text: go tool pprof -top URL; as a picture, /pprof/profile/flamegraph."));
    return cpu;
}

// Parses, takes the profile (409 while another one runs or when the process has a SIGPROF
// handler of its own), and writes it with `write`.
template <typename Write>
Response take_cpu_profile(const Request& request, CpuDefaults defaults, Write write) {
    auto cpu = parse_cpu(request, defaults);
    if (!cpu) {
        return text(400, cpu.error().message);
    }
    auto slot = CpuProfileSlot::claim();
    if (!slot) {
        return text(409, "a CPU profile is already being taken in this process; "
                         "ask again when it is done");
    }
    // Checked with the slot held: while another profile runs, the handler in place is ours.
    if (auto free = sigprof_is_free(); !free) {
        return text(409, free.error().message);
    }
    auto samples = slot->record(std::chrono::seconds(cpu->seconds), cpu->frequency, request.wait);
    if (!samples) {
        return text(500, samples.error().message);
    }
    if (request.stopping && request.stopping()) {
        return text(503, "cut short: the server is stopping or the client has gone");
    }
    return write(*samples, *cpu);
}

} // namespace

Response go_cpu_profile(const Request& request) {
    return take_cpu_profile(
        request, {30, 100}, [](const CpuSamples& samples, const CpuRequest& cpu) {
            auto body = cpu_pprof(samples, cpu.names);
            return body ? binary(std::move(*body), "application/octet-stream", "profile.pb.gz")
                        : text(500, body.error().message);
        });
}

Response jeprof_cpu_profile(const Request& request) {
    return take_cpu_profile(request, {30, 100}, [](const CpuSamples& samples, const CpuRequest&) {
        return binary(cpu_gperftools(samples), "application/octet-stream", "");
    });
}

Response cpu_report(const Request& request) {
    return take_cpu_profile(
        request, {10, 200}, [](const CpuSamples& samples, const CpuRequest& cpu) {
            auto body = cpu_pprof(samples, cpu.names);
            return body ? binary(std::move(*body), "application/octet-stream", "profile.pb.gz")
                        : text(500, body.error().message);
        });
}

Response cpu_flame_graph_page(const Request& request) {
    return take_cpu_profile(request, {10, 200},
                            [](const CpuSamples& samples, const CpuRequest& cpu) {
                                auto svg = cpu_flame_graph(samples, cpu.width);
                                return svg ? binary(std::move(*svg), "image/svg+xml", "")
                                           : text(500, svg.error().message);
                            });
}

} // namespace heapkit::runtime
