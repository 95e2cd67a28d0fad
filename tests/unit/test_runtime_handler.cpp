// SPDX-License-Identifier: MIT
// The handler in a process without jemalloc: every route's answer that does not need a
// profiler, and the 403 for those that do.
#include "heapkit/runtime/handler.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace heapkit::runtime;

namespace {

Response get(const std::string& path, const std::string& query = "",
             const std::string& method = "GET", const std::string& body = "") {
    return Handler(HandlerOptions{64}).handle(Request{method, path, query, {}, body, {}, {}, {}});
}

__attribute__((noinline)) int named_for_the_symbol_test() {
    return 42;
}

} // namespace

TEST_CASE("heapkit::runtime::Handler answers 403 without jemalloc, with a reason") {
    for (const char* path :
         {"/pprof/heap", "/debug/pprof/heap", "/debug/pprof/heap.folded", "/pprof/conf"}) {
        Response response = get(path);
        CHECK_MESSAGE(response.status == 403, path);
        CHECK(response.body.find("no jemalloc in this process") != std::string::npos);
    }
}

TEST_CASE("heapkit::runtime::Handler rejects unknown paths, methods, queries and big bodies") {
    CHECK(get("/nope").status == 404);
    Response wrong_method = get("/pprof/heap", "", "DELETE");
    CHECK(wrong_method.status == 405);
    CHECK(wrong_method.headers.at("Allow") == "GET, HEAD");
    CHECK(get("/debug/pprof/heap", "symbolize=maybe").status == 400);
    CHECK(get("/debug/pprof/heap", "colour=blue").status == 400);
    CHECK(get("/debug/pprof/heap.folded", "sample=everything").status == 400);
    CHECK(get("/debug/pprof/heap", "symbolize=%zz").status == 400);
    CHECK(get("/pprof/symbol", "", "POST", std::string(65, '0')).status == 413);
    CHECK(get("/pprof/symbol", "", "POST", "0xzz+0x1").status == 400);
}

TEST_CASE("heapkit::runtime::Handler speaks jeprof's symbol and cmdline protocol") {
    CHECK(get("/pprof/symbol").body == "num_symbols: 1\n");
    CHECK(get("/pprof/symbol", "", "HEAD").status == 200);
    CHECK(get("/pprof/cmdline").body.find("test_runtime_handler") != std::string::npos);

    auto address = reinterpret_cast<uintptr_t>(&named_for_the_symbol_test);
    Response names = get("/pprof/symbol", "", "POST", fmt::format("0x{:016x}\n", address));
    CHECK(names.status == 200);
    CHECK(names.body.find(fmt::format("0x{:x}\t", address)) == 0); // no zero padding
    CHECK(names.body.find("named_for_the_symbol_test") != std::string::npos);
}

TEST_CASE("heapkit::runtime::Handler serves telemetry as Prometheus text") {
    Response metrics = get("/metrics");
    CHECK(metrics.status == 200);
    CHECK(metrics.content_type.find("version=0.0.4") != std::string::npos);
    CHECK(metrics.body.find("heapkit_process_rss_bytes ") != std::string::npos);
}

TEST_CASE("heapkit::runtime::Handler answers 503 with Retry-After past max_conversions") {
    HandlerOptions options;
    options.max_conversions = 0; // every conversion finds the limit reached
    Handler handler(options);
    for (const char* path : {"/pprof/heap", "/debug/pprof/heap", "/debug/pprof/heap.folded"}) {
        Response response = handler.handle(Request{"GET", path, "", {}, "", {}, {}, {}});
        CHECK_MESSAGE(response.status == 503, path);
        CHECK(response.headers["Retry-After"] == "1");
    }
    CHECK(handler.handle(Request{"POST", "/pprof/symbol", "", {}, "0x1", {}, {}, {}}).status ==
          503);
    // What converts nothing is not limited.
    CHECK(handler.handle(Request{"GET", "/pprof/symbol", "", {}, "", {}, {}, {}}).status == 200);
    CHECK(handler.handle(Request{"GET", "/metrics", "", {}, "", {}, {}, {}}).status == 200);
}

TEST_CASE(
    "heapkit::runtime::Handler refuses control unless allowed, and sampling under the floor") {
    HandlerOptions closed; // control is off by default
    Response response = Handler(closed).handle(
        Request{"POST", "/pprof/conf", "prof.active:false", {}, "", {}, {}, {}});
    CHECK(response.status == 403);
    CHECK(response.body.find("allow_control") != std::string::npos);

    HandlerOptions floor; // min_lg_sample 10 by default
    floor.allow_control = true;
    response =
        Handler(floor).handle(Request{"POST", "/pprof/conf", "prof.reset:0", {}, "", {}, {}, {}});
    CHECK(response.status == 403);
    CHECK(response.body.find("min_lg_sample") != std::string::npos);
    response =
        Handler(floor).handle(Request{"POST", "/pprof/conf", "prof.reset%3A9", {}, "", {}, {}, {}});
    CHECK(response.status == 403);
    // At the floor, the request goes on (and here finds no jemalloc).
    response =
        Handler(floor).handle(Request{"POST", "/pprof/conf", "prof.reset:10", {}, "", {}, {}, {}});
    CHECK(response.body.find("no jemalloc in this process") != std::string::npos);
}

TEST_CASE("heapkit::runtime::Handler's index pages link every page with its parameters") {
    Response root = get("/");
    CHECK(root.status == 200);
    CHECK(root.content_type == "text/html; charset=utf-8");
    Response go = get("/debug/pprof/");
    for (const PageInfo& page : pages()) {
        CHECK(get(std::string(page.path), "", "DELETE").status == 405); // each one is a route
        if (page.path == "/") {
            continue;
        }
        CHECK_MESSAGE(root.body.find(fmt::format("href=\"{}\"", page.path)) != std::string::npos,
                      page.path);
        bool go_style = page.path.starts_with("/debug/pprof/") && page.path != "/debug/pprof/";
        CHECK_MESSAGE((go.body.find(fmt::format("href=\"{}\"", page.path)) != std::string::npos) ==
                          go_style,
                      page.path);
    }
    CHECK(root.body.find("seconds=30&amp;frequency=100") != std::string::npos);
}

TEST_CASE("heapkit::runtime::Handler: /debug/jemalloc/peaks without a watcher, and its POST") {
    HandlerOptions closed;
    Response response =
        Handler(closed).handle(Request{"POST", "/debug/jemalloc/peaks", "", {}, "", {}, {}, {}});
    CHECK(response.status == 403);
    CHECK(response.body.find("HEAPKIT_CONTROL") != std::string::npos);
    HandlerOptions open;
    open.allow_control = true;
    response =
        Handler(open).handle(Request{"POST", "/debug/jemalloc/peaks", "", {}, "", {}, {}, {}});
    CHECK(response.status == 409);
    CHECK(response.body.find("HEAPKIT_PEAKS_DIR") != std::string::npos);
    response = Handler(open).handle(
        Request{"GET", "/debug/jemalloc/peaks", "capture=x.1.0.peak", {}, "", {}, {}, {}});
    CHECK(response.status == 404);
    // The index links the page in every process: it says how to turn the watcher on.
    response =
        Handler(open).handle(Request{"GET", "/debug/jemalloc/peaks", "", {}, "", {}, {}, {}});
    CHECK(response.status == 200);
    CHECK(response.content_type.starts_with("text/html"));
    CHECK(response.body.find("HEAPKIT_PEAKS_DIR") != std::string::npos);
}
