// SPDX-License-Identifier: MIT
#include "heapkit/stats/stats_print_text.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace heapkit::stats;

namespace {

// malloc_stats_print's text as jemalloc 5.3 writes it (redis' MEMORY MALLOC-STATS), cut
// down: spacing, columns and order as printed.
const std::string header = R"(___ Begin jemalloc statistics ___
Version: "5.3.0-0-gtest"
Build-time option settings
  config.stats: true
Run-time option settings
  opt.retain: true
  opt.narenas: 8
  opt.background_thread: false (background_thread: true)
  opt.dirty_decay_ms: 10000 (arenas.dirty_decay_ms: 5000)
  opt.muzzy_decay_ms: 0 (arenas.muzzy_decay_ms: 0)
  opt.tcache: true
  opt.prof: true
  opt.prof_prefix: "jeprof"
  opt.prof_active: true (prof.active: false)
Arenas: 9
Quantum size: 16
Page size: 4096
Maximum thread-cached size class: 32768
Allocated: 5292568, active: 5574656, metadata: 2805232 (n_thp 0), resident: 8302592, mapped: 11878400, retained: 2277376
)";

std::string section(const std::string& title, uint64_t curregs) {
    return title + R"(
assigned threads: 1
decaying:  time       npages       sweeps     madvises       purged
   dirty: 10000            3            0            0            0
   muzzy:   N/A            2            0            0            0
                            allocated         nmalloc   (#/sec)
small:                        4219416          100737    100737
large:                        1073152              12        12
active:                       5574656
mapped:                      11878400
base:                         2711024
internal:                       94208
tcache_bytes:                   82128
resident:                     8302592
large                              13      13               0
bins:           size ind    allocated      nmalloc (#/sec)  nshards      curregs     curslabs  nonfull_slabs regs pgs   util
                   8   0         6040          800     800        1          755            2              0  512   1  0.737
                     ---
                  48   3        31728          700     700        1          )" +
           std::to_string(curregs) + R"(            3              0  256   3  0.860
large:          size ind    allocated      nmalloc (#/sec)  curlextents
               16384  36        49152            3       3            3
extents:        size ind       ndirty        dirty
               12288   2            1        12288
)";
}

const std::string footer = "--- End jemalloc statistics ---\n";

} // namespace

TEST_CASE("heapkit::stats::parse_stats_print_text reads redis' MEMORY MALLOC-STATS") {
    auto stats = parse_stats_print_text(header + section("arenas[0]:", 661) + footer, "r.txt");
    REQUIRE(stats);
    CHECK(stats->version == "5.3.0-0-gtest");
    CHECK(stats->allocated == 5292568);
    CHECK(stats->active == 5574656);
    CHECK(stats->retained == 2277376);
    CHECK(stats->background_thread); // the value in force, not opt's
    CHECK(stats->profiling);
    CHECK(stats->dirty_decay_ms == 5000);
    CHECK(stats->tcache_max == 32768);
    CHECK(stats->narenas == 9);
    CHECK(stats->arenas_in_use == 1);
    CHECK(stats->merged.pactive == 5574656 / 4096);
    CHECK(stats->merged.pdirty == 3);
    CHECK(stats->merged.pmuzzy == 2);
    CHECK(stats->merged.muzzy_decay_ms == -1);
    CHECK(stats->merged.tcache_bytes == 82128);
    CHECK(stats->merged.small_allocated == 4219416);
    CHECK(stats->merged.large_allocated == 1073152);
    REQUIRE(stats->merged.bins.size() == 2);
    CHECK(stats->merged.bins[1].size == 48);
    CHECK(stats->merged.bins[1].curregs == 661);
    CHECK(stats->merged.bins[1].curslabs == 3);
    CHECK(stats->merged.bins[1].slab_size == 3 * 4096);
    CHECK(stats->merged.bins[1].regions == 256);
}

TEST_CASE("heapkit::stats::parse_stats_print_text reads the merge when there is one") {
    std::string text = header + section("Merged arenas stats:", 900) + section("arenas[0]:", 600) +
                       section("arenas[1]:", 300) + footer;
    auto stats = parse_stats_print_text(text, "r.txt");
    REQUIRE(stats);
    CHECK(stats->arenas_in_use == 2);
    CHECK(stats->merged.bins[1].curregs == 900);
}

TEST_CASE("heapkit::stats::parse_stats_print_text refuses what it cannot read") {
    std::string good = header + section("arenas[0]:", 661) + footer;
    struct Case {
        std::string text;
        std::string said;
    };
    for (const Case& bad : {
             Case{good.substr(0, good.size() - 40), "truncated"},
             Case{"hello\n" + footer, "r.txt:1: not jemalloc statistics"},
             Case{header + footer, "neither"},
             Case{header + footer, "drop \"m\" and \"a\" from stats_print_opts"},
             Case{"___ Begin jemalloc statistics ___\n  config.stats: false\n" + footer,
                  "without statistics"},
             Case{header.substr(0, header.find("Allocated")) + section("arenas[0]:", 1) + footer,
                  "no \"Allocated"},
             Case{header + section("arenas[0]:", 1) + "   1 2\n" + footer, ""},
         }) {
        auto stats = parse_stats_print_text(bad.text, "r.txt");
        if (bad.said.empty()) {
            CHECK(stats); // a stray row outside any table is not an error
            continue;
        }
        REQUIRE_FALSE(stats);
        CHECK_MESSAGE(stats.error().message.find(bad.said) != std::string::npos,
                      stats.error().message);
    }
    std::string short_row = good;
    short_row.replace(short_row.find("0.737"), 5, "");
    auto stats = parse_stats_print_text(short_row, "r.txt");
    REQUIRE_FALSE(stats);
    CHECK(stats.error().message.find("a bins row of 11 values under a header of 12") !=
          std::string::npos);
}
