// SPDX-License-Identifier: MIT
#include "heapkit/stats/stats_json.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace heapkit::stats;

namespace {

// The shape of jemalloc 5.3's "J" output, cut to what the reader needs, with `arenas` as
// the stats.arenas members.
std::string document(const std::string& arenas, const std::string& config_stats = "true") {
    return R"({"jemalloc":{"version":"5.3.0-0-gtest","config":{"prof":true,"stats":)" +
           config_stats +
           R"(},"opt":{"retain":true,"prof":true,"prof_prefix":"jeprof","narenas":8,"background_thread":false,"tcache":true,
"lg_tcache_max":15,"stats_print":true,"stats_print":true},
"arenas":{"narenas":9,"dirty_decay_ms":10000,"muzzy_decay_ms":-1,"page":4096,
"tcache_max":32768,"bin":[{"size":8,"nregs":512,"slab_size":4096,"nshards":1},
{"size":48,"nregs":256,"slab_size":12288,"nshards":1}]},
"stats":{"allocated":1000,"active":40960,"metadata":5000,"resident":61440,"mapped":81920,
"retained":8192},"stats.arenas":{)" +
           arenas + "}}}";
}

std::string arena(uint64_t curregs48, bool nonfull = true) {
    return R"({"nthreads":2,"dirty_decay_ms":-1,"muzzy_decay_ms":-1,"pactive":10,"pdirty":3,
"pmuzzy":1,"small":{"allocated":800},"large":{"allocated":200},"mapped":81920,
"retained":8192,"base":4000,"internal":1000,"tcache_bytes":96,"resident":61440,
"bins":[{"curregs":1,"curslabs":1)" +
           std::string(nonfull ? R"(,"nonfull_slabs":1)" : "") + R"(},{"curregs":)" +
           std::to_string(curregs48) + R"(,"curslabs":2}]})";
}

} // namespace

TEST_CASE("heapkit::stats::parse_stats_json reads one arena") {
    auto stats = parse_stats_json(document(R"("0":)" + arena(10)), "s.json");
    REQUIRE(stats);
    CHECK(stats->version == "5.3.0-0-gtest");
    CHECK(stats->allocated == 1000);
    CHECK(stats->retained == 8192);
    CHECK(stats->page == 4096);
    CHECK(stats->muzzy_decay_ms == -1);
    CHECK(stats->tcache_max == 32768);
    CHECK(stats->retain);
    CHECK(stats->profiling);
    CHECK(stats->arenas_in_use == 1);
    CHECK(stats->merged.pdirty == 3);
    CHECK(stats->merged.tcache_bytes == 96);
    REQUIRE(stats->merged.bins.size() == 2);
    CHECK(stats->merged.bins[1].size == 48);
    CHECK(stats->merged.bins[1].curregs == 10);
    CHECK(stats->merged.bins[1].wasted() == 2 * 12288 - 10 * 48);
}

TEST_CASE("heapkit::stats::parse_stats_json prefers the merge over single arenas") {
    auto stats = parse_stats_json(
        document(R"("merged":)" + arena(30) + R"(,"0":)" + arena(10) + R"(,"3":)" + arena(20)),
        "s.json");
    REQUIRE(stats);
    CHECK(stats->arenas_in_use == 2);
    CHECK(stats->merged.bins[1].curregs == 30);
}

TEST_CASE("heapkit::stats::parse_stats_json takes 5.2's bins without nonfull_slabs") {
    auto stats = parse_stats_json(document(R"("0":)" + arena(10, false)), "s.json");
    REQUIRE(stats);
    CHECK(stats->merged.bins[0].nonfull_slabs == 0);
}

TEST_CASE("heapkit::stats::parse_stats_json refuses what it cannot explain") {
    std::string good = document(R"("0":)" + arena(10));
    struct Case {
        std::string text;
        std::string said;
    };
    for (const Case& bad : {
             Case{good.substr(0, good.size() / 2), "truncated"},
             Case{"{\"name\":\"left-pad\"}", "not jemalloc statistics"},
             Case{"[1,2]", "not jemalloc statistics"},
             Case{R"({"jemalloc":1e99999})", "number overflow"},
             Case{document(R"("0":)" + arena(10), "false"), "without statistics"},
             Case{document(""), "neither"},
             Case{document(R"("0":)" + arena(10) + R"(,"1":)" + arena(10)), "no \"merged\""},
             Case{document(R"("0":{"nthreads":-1})"), "stats.arenas.0.nthreads"},
         }) {
        auto stats = parse_stats_json(bad.text, "s.json");
        REQUIRE_FALSE(stats);
        CHECK(stats.error().message.starts_with("s.json: "));
        CHECK_MESSAGE(stats.error().message.find(bad.said) != std::string::npos,
                      stats.error().message);
    }
}
