// SPDX-License-Identifier: MIT
#include "heapkit/emit/writers.hpp"
#include "heapkit/model/log_profile.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

namespace {

// One site whose objects lived 50 ns, 50 ms (twice) and 200 s, in a log of 300 s.
std::string chart_of_one_site() {
    ProfLog log;
    log.source = "t.json";
    log.lg_sample_rate = 0; // every allocation: weights of 1
    log.duration_nanos = 300'000'000'000;
    log.threads = {{0, ""}};
    log.traces = {{0x1100}};
    log.allocations.push_back({0, 0, 0, 0, 1000, 1050, 64});
    log.allocations.push_back({0, 0, 0, 0, 0, 50'000'000, 64});
    log.allocations.push_back({0, 0, 0, 0, 10, 50'000'010, 64});
    log.allocations.push_back({0, 0, 0, 0, 0, 200'000'000'000, 64});
    std::vector<MapEntry> maps = {{0x1000, 0x2000, 0, true, false, "/bin/prog", 1}};
    Profile profile = build_log_profile(log, maps, {});
    std::string svg;
    auto done = write_lifetime_chart(profile, FoldedOptions{}, {8, 1200},
                                     [&](std::string_view piece) -> Result<void> {
                                         svg += piece;
                                         return {};
                                     });
    REQUIRE(done);
    return svg;
}

} // namespace

TEST_CASE("heapkit::write_lifetime_chart labels the open-ended buckets and counts each row") {
    std::string svg = chart_of_one_site();
    // What lived longer than the last decade has its own column, named, not the last
    // decade's bar; likewise what lived under 100 ns.
    CHECK(svg.find("1 objects lived 100s or more (25.0%)") != std::string::npos);
    CHECK(svg.find("1 objects lived under 100ns (25.0%)") != std::string::npos);
    CHECK(svg.find("2 objects lived 50ms to 56.2ms") == std::string::npos);
    CHECK(svg.find("2 objects lived 31.6ms to 56.2ms (50.0%)") != std::string::npos);
    CHECK(svg.find(">\u2265100s</text>") != std::string::npos);
    CHECK(svg.find("><100ns</text>") == std::string::npos); // escaped as XML
    CHECK(svg.find(">&lt;100ns</text>") != std::string::npos);
    // Each row: its objects and its tallest bar, and the note on the per-row scale.
    CHECK(svg.find("4 objects, tallest bar 2</text>") != std::string::npos);
    CHECK(svg.find("scaled to its own tallest bar") != std::string::npos);
}
