// SPDX-License-Identifier: MIT
#include "heapkit/runtime/pages/heap_views.hpp"

#include "heapkit/report/report.hpp"
#include "heapkit/runtime/export/export.hpp"
#include "heapkit/runtime/pages/page_query.hpp"
#include "heapkit/runtime/profiler.hpp"
#include "heapkit/util/try.hpp"

#include <cerrno> // program_invocation_short_name
#include <chrono>
#include <fmt/format.h>
#include <thread>
#include <unistd.h>
#include <utility>

namespace heapkit::runtime {
namespace {

constexpr std::string_view heap_keys[] = {"seconds", "sample", "symbolize", "width", "debug"};

} // namespace

bool asks_delta(const Request& request) {
    std::string_view query = request.query;
    return query.starts_with("seconds=") || query.find("&seconds=") != std::string_view::npos;
}

Request as_allocs(const Request& request) {
    Request allocs = request;
    if (!request.query.starts_with("sample=") &&
        request.query.find("&sample=") == std::string::npos) {
        allocs.query += request.query.empty() ? "sample=alloc_space" : "&sample=alloc_space";
    }
    return allocs;
}

namespace {

struct HeapRequest {
    LoadOptions load;
    unsigned seconds = 0;
    unsigned width = 1200;
};

Result<HeapRequest> parse_heap(const Request& request) {
    HEAPKIT_TRY_ASSIGN(auto query, parse_query(request.path, request.query, heap_keys));
    HeapRequest heap;
    HEAPKIT_TRY_ASSIGN(heap.seconds, query_number(query, "seconds", 0, 1, max_window_seconds));
    HEAPKIT_TRY_ASSIGN(heap.width,
                       query_number(query, "width", 1200, FlameOptions::min_width, 20000));
    HEAPKIT_TRY_ASSIGN(heap.load.symbols.names, query_flag(query, "symbolize", true));
    HEAPKIT_TRY(query_debug(query, "As text: go tool pprof -top URL, or /debug/pprof/heap.folded "
                                   "(collapsed stacks)."));
    if (query.count("sample")) {
        auto sample = parse_sample_type(query.at("sample"));
        if (!sample) {
            return fail("sample={}: expected inuse_space, inuse_objects, alloc_space or "
                        "alloc_objects",
                        query.at("sample"));
        }
        heap.load.sample = *sample;
    }
    return heap;
}

// For a request heap_page has let in: profiling was active when it came.
Result<Profile> heap_now(const Profiler& profiler, const LoadOptions& options) {
    HEAPKIT_TRY_ASSIGN(std::string dump, profiler.dump(Profiler::Check::done_by_caller));
    return own_dump_profile(dump, options);
}

// A heap page's request parsed, with the profiler active: or the answer refusing it.
struct HeapPage {
    HeapRequest heap;
    Profiler profiler;
};
tl::expected<HeapPage, Response> heap_page(const Request& request) {
    auto heap = parse_heap(request);
    if (!heap) {
        return tl::unexpected(text(400, heap.error().message));
    }
    auto profiler = Profiler::find(request.jemalloc);
    if (!profiler || !profiler->require_active()) {
        return tl::unexpected(text(403, profiler ? profiler->require_active().error().message
                                                 : profiler.error().message));
    }
    return HeapPage{std::move(*heap), std::move(*profiler)};
}

// The heap now, for a page that draws it (a flame graph, the report), with its request; or
// the response that says why not.
tl::expected<std::pair<HeapRequest, Profile>, Response> heap_to_draw(const Request& request) {
    auto page = heap_page(request);
    if (!page) {
        return tl::unexpected(std::move(page.error()));
    }
    auto profile = heap_now(page->profiler, page->heap.load);
    if (!profile) {
        return tl::unexpected(text(400, profile.error().message));
    }
    return std::pair{std::move(page->heap), std::move(*profile)};
}

} // namespace

Response heap_delta(const Request& request) {
    auto page = heap_page(request);
    if (!page) {
        return page.error();
    }
    const HeapRequest& heap = page->heap;
    const Profiler& profiler = page->profiler;
    // The first dump as jemalloc wrote it: converted after the window, with the second,
    // when the Handler has given this page a conversion slot (handler.cpp).
    auto first_dump = profiler.dump(Profiler::Check::done_by_caller);
    if (!first_dump) {
        return text(500, first_dump.error().message);
    }
    if (request.wait) {
        request.wait(std::chrono::seconds(heap.seconds));
    } else {
        std::this_thread::sleep_for(std::chrono::seconds(heap.seconds));
    }
    if (request.stopping && request.stopping()) {
        return text(503, "cut short: the server is stopping or the client has gone");
    }
    auto before = own_dump_profile(*first_dump, heap.load);
    if (!before) {
        return text(400, before.error().message); // e.g. alloc_* without prof_accum
    }
    *first_dump = std::string(); // its memory back before the second dump
    auto after = heap_now(profiler, heap.load);
    if (!after) {
        return text(500, after.error().message);
    }
    auto delta = subtract_base(*after, *before);
    PprofOptions pprof;
    pprof.default_type = heap.load.sample;
    pprof.comments.push_back(
        fmt::format("delta: the heap now less the heap {} s before", heap.seconds));
    auto body =
        delta ? write_pprof(*after, pprof) : Result<std::string>(tl::unexpected(delta.error()));
    return body ? binary(std::move(*body), "application/octet-stream", "heap.pb.gz")
                : text(500, body.error().message);
}

Response heap_flame_graph_page(const Request& request) {
    auto drawn = heap_to_draw(request);
    if (!drawn) {
        return drawn.error();
    }
    auto& [heap, profile] = *drawn;
    FoldedOptions folded;
    folded.sample = heap.load.sample;
    FlameOptions flame;
    flame.width = heap.width;
    return flame_graph_response(profile, folded, flame);
}

Response flame_graph_response(const Profile& profile, const FoldedOptions& folded,
                              const FlameOptions& flame) {
    std::string svg;
    auto done =
        write_flame_graph(profile, folded, flame, [&](std::string_view piece) -> Result<void> {
            svg += piece;
            return {};
        });
    return done ? binary(std::move(svg), "image/svg+xml", "") : text(500, done.error().message);
}

Response heap_report_page(const Request& request) {
    auto taken = std::chrono::system_clock::now(); // the dump follows at once
    auto drawn = heap_to_draw(request);
    if (!drawn) {
        return drawn.error();
    }
    auto& [heap, profile] = *drawn;
    FoldedOptions folded;
    folded.sample = heap.load.sample;
    HtmlOptions html;
    html.title = fmt::format("heapkit: the live heap of pid {}", ::getpid());
    html.capture = HtmlOptions::Capture{
        .unix_millis =
            std::chrono::duration_cast<std::chrono::milliseconds>(taken.time_since_epoch()).count(),
        .pid = ::getpid(),
        .program = program_invocation_short_name};
    // Source files are not read inside a running program, nor served over HTTP.
    html.source_excerpts = false;
    std::string page_text;
    auto done = write_html_report(std::move(profile), std::nullopt, folded, html,
                                  [&](std::string_view piece) -> Result<void> {
                                      page_text += piece;
                                      return {};
                                  });
    return done ? binary(std::move(page_text), "text/html; charset=utf-8", "")
                : text(500, done.error().message);
}

} // namespace heapkit::runtime
