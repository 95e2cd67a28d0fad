// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/sample_stacks.hpp"
#include "heapkit/growth/allocation_sites.hpp"
#include "heapkit/growth/stack_trends.hpp"
#include "test_profiles.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

namespace {

// One process's dumps a second apart: a leak that grows every time, a cache that filled
// at once and stayed, a batch that rose and fell back, and a stack that never changed.
std::vector<Profile> series() {
    std::vector<Profile> dumps;
    int64_t values[][4] = {
        {100, 200, 300, 400}, {0, 900, 900, 900}, {100, 700, 100, 100}, {50, 50, 50, 50}};
    for (int d = 0; d < 4; ++d) {
        dumps.push_back(test::named_profile({{{"main", "leak"}, values[0][d]},
                                             {{"main", "cache"}, values[1][d]},
                                             {{"main", "batch"}, values[2][d]},
                                             {{"main", "flat"}, values[3][d]}},
                                            (d + 1) * 1'000'000'000LL));
    }
    return dumps;
}

const StackTrend& stack_named(const GrowthSeries& series, std::string_view stack) {
    auto it = std::find_if(series.stacks.begin(), series.stacks.end(),
                           [&](const StackTrend& trend) { return trend.stack == stack; });
    REQUIRE(it != series.stacks.end());
    return *it;
}

} // namespace

TEST_CASE("heapkit::follow_stacks follows each stack through the dumps, per second") {
    std::vector<Profile> dumps = series();
    auto followed = follow_stacks(dumps, {});
    REQUIRE(followed);
    CHECK(followed->dumps == 4);
    CHECK(followed->timed);
    CHECK(followed->seconds == std::vector<double>{0, 1, 2, 3});
    CHECK(stack_named(*followed, "main;leak").values == std::vector<int64_t>{100, 200, 300, 400});
    CHECK(stack_named(*followed, "main;cache").values == std::vector<int64_t>{0, 900, 900, 900});
    // 100 bytes more every second, exactly.
    CHECK(stack_named(*followed, "main;leak").per_second.slope == doctest::Approx(100));
    CHECK(stack_named(*followed, "main;flat").per_second.slope == doctest::Approx(0));
}

TEST_CASE("heapkit::follow_stacks ranks steady growth above a cache that filled or a batch") {
    std::vector<Profile> dumps = series();
    auto followed = follow_stacks(dumps, {});
    REQUIRE(followed);
    REQUIRE(followed->stacks.size() == 4);
    CHECK(followed->stacks[0].stack == "main;leak");
    // The stack that never moved is no suspect: last.
    CHECK(followed->stacks.back().stack == "main;flat");
}

TEST_CASE("heapkit::follow_stacks refuses fewer than 3 dumps, and dumps of other runs only") {
    std::vector<Profile> two = series();
    two.resize(2);
    auto few = follow_stacks(two, {});
    REQUIRE_FALSE(few);
    CHECK(few.error().message.find("at least 3") != std::string::npos);

    std::vector<Profile> runs;
    for (int pid = 1; pid <= 3; ++pid) {
        runs.push_back(
            test::named_profile({{{"main", "leak"}, 100 * pid}}, pid * 1'000'000'000LL, pid));
    }
    auto apart = follow_stacks(runs, {});
    REQUIRE_FALSE(apart);
    CHECK(apart.error().message.find("another run") != std::string::npos);
}

TEST_CASE("heapkit::allocation_sites names each stack's leaf") {
    std::vector<Profile> dumps = series();
    auto followed = follow_stacks(dumps, {});
    REQUIRE(followed);
    auto sites = allocation_sites(dumps, {}, followed->stacks);
    REQUIRE(sites);
    REQUIRE(sites->size() == followed->stacks.size());
    for (size_t s = 0; s < sites->size(); ++s) {
        CHECK((*sites)[s] == leaf_of(followed->stacks[s].stack));
    }
    CHECK(leaf_of("main;a;b") == "b");
    CHECK(leaf_of("main") == "main");
}

TEST_CASE("heapkit::suspect_count shows what grows, or the largest when nothing does") {
    std::vector<Profile> dumps = series();
    auto followed = follow_stacks(dumps, {});
    REQUIRE(followed);
    // Only the leak grows: the cache stopped, the batch fell back, the flat one never moved.
    CHECK(growing_count(*followed) == 1);
    CHECK(suspect_count(*followed, 0) == 1);
    CHECK(suspect_count(*followed, 10) == 1);

    std::vector<Profile> still;
    for (int d = 0; d < 3; ++d) {
        still.push_back(test::named_profile({{{"main", "a"}, 300}, {{"main", "b"}, 200}},
                                            (d + 1) * 1'000'000'000LL));
    }
    auto flat = follow_stacks(still, {});
    REQUIRE(flat);
    CHECK(growing_count(*flat) == 0);
    CHECK(suspect_count(*flat, 0) == 2);
    CHECK(suspect_count(*flat, 1) == 1);
}

TEST_CASE("heapkit::follow_stacks counts no growth smaller than one step of the stack") {
    // A 64 kB buffer that comes and goes, ending held: its line rises by 39 kB over the
    // 5 s (a persistent 7.8 kB/s), less than the one buffer it ever moves by.
    int64_t buffer[] = {0, 65536, 0, 0, 65536, 65536};
    std::vector<Profile> dumps;
    for (int d = 0; d < 6; ++d) {
        dumps.push_back(test::named_profile(
            {{{"main", "batch"}, buffer[d]}, {{"main", "leak"}, 4096 * (d + 1)}},
            (d + 1) * 1'000'000'000LL));
    }
    auto followed = follow_stacks(dumps, {});
    REQUIRE(followed);
    CHECK(growing_count(*followed) == 1);
    CHECK(followed->stacks[0].stack == "main;leak");
    CHECK(stack_named(*followed, "main;batch").trend.persistent() == 0);
    CHECK(stack_named(*followed, "main;batch").per_second.persistent() > 7000);
    CHECK(stack_named(*followed, "main;leak").trend.persistent() == doctest::Approx(4096));
}
