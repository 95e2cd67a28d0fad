// SPDX-License-Identifier: MIT
#include "heapkit/stats/reconcile.hpp"

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
    Reconciliation report = reconcile(figures(), 90000, std::nullopt);
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
