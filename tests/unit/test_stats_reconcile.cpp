// SPDX-License-Identifier: MIT
#include "heapkit/stats/reconcile.hpp"

#include <algorithm>
#include <doctest/doctest.h>

using namespace heapkit::stats;

namespace {

JemallocStats figures() {
    JemallocStats stats;
    stats.page = 4096;
    stats.allocated = 100000;
    stats.active = 40 * 4096;
    stats.metadata = 30000;
    stats.resident = 60 * 4096;
    stats.mapped = 80 * 4096;
    stats.retained = 1 << 20;
    stats.merged.tcache_bytes = 2000;
    stats.merged.pdirty = 12;
    stats.merged.pmuzzy = 3;
    // 48-byte class: 2 slabs of 12288, 100 regions used; 8-byte class full.
    stats.merged.bins = {BinStats{8, 512, 4096, 512, 1, 0}, BinStats{48, 256, 12288, 100, 2, 2},
                         BinStats{160, 128, 20480, 10, 1, 1}};
    return stats;
}

const Row& find_row(const std::vector<Row>& rows, const std::string& key) {
    for (const Row& r : rows) {
        if (r.key == key) {
            return r;
        }
    }
    FAIL("no row ", key);
    return rows.front();
}

int64_t row(const std::vector<Row>& rows, const std::string& key) {
    for (const Row& r : rows) {
        if (r.key == key) {
            return r.bytes;
        }
    }
    FAIL("no row ", key);
    return 0;
}

} // namespace

TEST_CASE("heapkit::stats::reconcile steps add up to jemalloc's totals") {
    Reconciliation report = reconcile(figures(), ProfileFigures{90000}, std::nullopt);
    CHECK(row(report.allocator, "profile") == 90000);
    CHECK(row(report.allocator, "unprofiled") == 100000 - 2000 - 90000);
    CHECK(row(report.allocator, "tcache") == 2000);
    CHECK(row(report.allocator, "slab_waste") == (2 * 12288 - 100 * 48) + (20480 - 1600));
    CHECK(row(report.allocator, "dirty") == 12 * 4096);
    CHECK(row(report.allocator, "muzzy") == 3 * 4096);
    CHECK(row(report.allocator, "retained") == 1 << 20);
    int64_t running = 0;
    for (const Row& r : report.allocator) {
        if (r.subtotal && r.key != "profile") {
            CHECK_MESSAGE(r.bytes == running, r.key);
        }
        running = r.subtotal ? r.bytes : running + r.bytes;
        CHECK(!r.what.empty());
    }
    CHECK(running == 80 * 4096 + (1 << 20));
    REQUIRE(report.worst_bins.size() == 2); // the full class wastes nothing
    CHECK(report.worst_bins[0].bin.size == 48);
    CHECK(report.worst_bins[0].utilization == doctest::Approx(100.0 / 512));
    CHECK(report.rss.empty());
}

TEST_CASE("heapkit::stats::reconcile splits the RSS") {
    ResidentMemory memory;
    memory.rss = 10 << 20;
    memory.anonymous = 8 << 20;
    memory.file = 2 << 20;
    memory.stacks = 1 << 20;
    Reconciliation report = reconcile(figures(), std::nullopt, memory);
    CHECK(row(report.allocator, "program") == 98000);
    CHECK(row(report.rss, "jemalloc_resident") == 60 * 4096);
    CHECK(row(report.rss, "thread_stacks") == 1 << 20);
    CHECK(row(report.rss, "other_anonymous") == (7 << 20) - 60 * 4096);
    CHECK(row(report.rss, "file_backed") == 2 << 20);
    CHECK(row(report.rss, "rss") == 10 << 20);
}

TEST_CASE("heapkit::stats::reconcile gives profiling's sampled objects a row of their own") {
    JemallocStats stats = figures();
    stats.profiling = true;
    stats.lg_prof_sample = 12;
    stats.large_minclass = 16384;
    stats.allocated = 300000;
    stats.active = 120 * 4096;
    // 5 sampled small objects of 100 bytes, one sampled large one of 20000 left out.
    ProfileFigures profile{150000, 5, 500, 4096};
    Reconciliation report = reconcile(stats, profile, std::nullopt);
    CHECK(row(report.allocator, "sampled_pages") == 5 * 16384 - 500);
    CHECK(row(report.allocator, "unprofiled") == 300000 - 2000 - 150000 - (5 * 16384 - 500));
    CHECK(row(report.allocator, "sampled_page_pad") == 5 * 4096);
    CHECK(find_row(report.allocator, "sampled_pages").knob.find("lg_prof_sample (now 12)") !=
          std::string::npos);
    int64_t running = 0;
    for (const Row& r : report.allocator) {
        if (r.subtotal && r.key != "profile") {
            CHECK_MESSAGE(r.bytes == running, r.key);
        }
        running = r.subtotal ? r.bytes : running + r.bytes;
    }
    stats.profiling = false; // no promotion without profiling
    report = reconcile(stats, profile, std::nullopt);
    CHECK(std::none_of(report.allocator.begin(), report.allocator.end(),
                       [](const Row& r) { return r.key == "sampled_pages"; }));
}

TEST_CASE("heapkit::stats::reconcile advises only what the figures support") {
    JemallocStats stats = figures();
    stats.arenas_in_use = 4;
    stats.arena_slab_waste = {9000, 100, 100, 0}; // one arena holds nearly all
    std::string knob =
        find_row(reconcile(stats, std::nullopt, std::nullopt).allocator, "slab_waste").knob;
    CHECK(knob.find("not narenas (arena 0 holds 98%") != std::string::npos);
    stats.arena_slab_waste = {3000, 3000, 2000, 1000}; // spread
    knob = find_row(reconcile(stats, std::nullopt, std::nullopt).allocator, "slab_waste").knob;
    CHECK(knob.starts_with("fewer arenas (narenas"));
    CHECK(knob.find("activedefrag") == std::string::npos); // JSON: not redis's
    stats.format = "text";
    knob = find_row(reconcile(stats, std::nullopt, std::nullopt).allocator, "slab_waste").knob;
    CHECK(knob.find("activedefrag") < knob.find("restart"));

    stats.merged.pdirty = 100000; // 400 MB
    stats.resident = 500 << 20;
    stats.dirty_decay_ms = 10000;
    stats.background_thread = true;
    knob = find_row(reconcile(stats, std::nullopt, std::nullopt).allocator, "dirty").knob;
    CHECK(knob.find("by themselves within dirty_decay_ms (10000 ms)") != std::string::npos);
    CHECK(knob.find("MEMORY PURGE") != std::string::npos);
    stats.format = "json";
    stats.dirty_decay_ms = -1;
    stats.background_thread = false;
    knob = find_row(reconcile(stats, std::nullopt, std::nullopt).allocator, "dirty").knob;
    CHECK(knob.find("a finite dirty_decay_ms") != std::string::npos);
    stats.merged.pdirty = 10; // 40 kB: not worth a setting
    knob = find_row(reconcile(stats, std::nullopt, std::nullopt).allocator, "dirty").knob;
    CHECK(knob.find("a finite dirty_decay_ms") == std::string::npos);
}
