// SPDX-License-Identifier: MIT
#include "heapkit/runtime/fragmentation_sampler.hpp"

#include <doctest/doctest.h>

using namespace heapkit::runtime;

TEST_CASE("heapkit::runtime::parse_fragmentation_setting") {
    for (const char* off : {static_cast<const char*>(nullptr), "", "0", "off", "no", "false"}) {
        auto lg = parse_fragmentation_setting(off);
        REQUIRE(lg);
        CHECK_FALSE(*lg);
    }
    for (const char* on : {"1", "on", "yes", "true"}) {
        auto lg = parse_fragmentation_setting(on);
        REQUIRE(lg);
        CHECK(*lg == 19u); // jemalloc's default lg_prof_sample: 512 KiB
    }
    CHECK(parse_fragmentation_setting("lg_sample:0").value() == 0u);
    CHECK(parse_fragmentation_setting("lg_sample:8").value() == 8u);
    CHECK(parse_fragmentation_setting("lg_sample:30").value() == 30u);
    for (const char* bad : {"2", "lg_sample:", "lg_sample:31", "lg_sample:1x", "lg_sample:100",
                            "lg_sample:-1", "maybe"}) {
        auto lg = parse_fragmentation_setting(bad);
        REQUIRE_FALSE(lg);
        CHECK(lg.error().message.starts_with("HEAPKIT_FRAGMENTATION="));
    }
}

TEST_CASE("heapkit::runtime::fragmentation_sample is refused while off") {
    auto sample = fragmentation_sample();
    REQUIRE_FALSE(sample);
    CHECK(sample.error().message.find("HEAPKIT_FRAGMENTATION=1") != std::string::npos);
}
