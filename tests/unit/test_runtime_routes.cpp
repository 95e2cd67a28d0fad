// SPDX-License-Identifier: MIT
#include "heapkit/runtime/handler.hpp"
#include "heapkit/runtime/pages/routes.hpp"

#include <doctest/doctest.h>
#include <set>

using namespace heapkit::runtime;

namespace {

Request request(std::string path, std::string query = "", std::string method = "GET") {
    return Request{std::move(method), std::move(path), std::move(query), {}, {}, {}, {}, {}};
}

bool converts(const std::string& path, const std::string& method = "GET") {
    const Route* route = find_route(path);
    REQUIRE(route != nullptr);
    return counts_as_conversion(*route, request(path, "", method));
}

bool waits(const std::string& path, const std::string& query = "") {
    const Route* route = find_route(path);
    REQUIRE(route != nullptr);
    return route_waits(*route, request(path, query));
}

} // namespace

TEST_CASE("heapkit::runtime::routes lists each page once, with methods and a line to show") {
    std::set<std::string_view> paths;
    for (const Route& route : routes()) {
        CHECK_MESSAGE(paths.insert(route.path).second, route.path);
        CHECK_FALSE(route.methods.empty());
        CHECK_FALSE(route.about.empty());
        CHECK(route.serve);
        CHECK(find_route(route.path) == &route);
    }
    CHECK(find_route("/nope") == nullptr);
}

TEST_CASE("heapkit::runtime::routes counts every page that dumps the heap as a conversion") {
    // Each of these holds a dump and a profile: a page left out would escape max_conversions.
    for (const char* path :
         {"/pprof/heap", "/debug/pprof/heap", "/debug/pprof/allocs", "/debug/pprof/heap.folded",
          "/pprof/heap/report", "/pprof/heap/flamegraph", "/debug/pprof/ui"}) {
        CHECK_MESSAGE(converts(path), path);
    }
    CHECK(converts("/pprof/symbol", "POST"));
    CHECK_FALSE(converts("/pprof/symbol", "GET"));
    for (const char* path : {"/metrics", "/pprof/conf", "/pprof/cmdline", "/debug/pprof/profile",
                             "/debug/jemalloc/stats"}) {
        CHECK_FALSE_MESSAGE(converts(path), path);
    }
}

TEST_CASE("heapkit::runtime::routes marks the pages that wait out a window") {
    for (const char* path : {"/debug/pprof/profile", "/pprof/profile", "/pprof/profile/report",
                             "/pprof/profile/flamegraph", "/debug/jemalloc/log"}) {
        CHECK_MESSAGE(waits(path), path);
    }
    CHECK(waits("/debug/pprof/heap", "seconds=5"));
    CHECK(waits("/debug/pprof/allocs", "seconds=5"));
    CHECK_FALSE(waits("/debug/pprof/heap"));
    CHECK_FALSE(waits("/pprof/heap"));
    CHECK_FALSE(waits("/metrics"));
    CHECK(Handler::waits(request("/debug/pprof/profile", "seconds=1")));
    CHECK_FALSE(Handler::waits(request("/nope")));
}

TEST_CASE("heapkit::runtime::routes marks the CPU profile pages, and pages() follows the table") {
    for (const Route& route : routes()) {
        bool cpu = route.path == "/debug/pprof/profile" || route.path.starts_with("/pprof/profile");
        CHECK_MESSAGE(route.cpu_profile == cpu, route.path);
    }
    std::vector<PageInfo> listed = pages();
    REQUIRE(listed.size() == routes().size());
    CHECK(listed.front().path == "/");
    CHECK(find_route("/debug/pprof/") != nullptr);
}
