// SPDX-License-Identifier: MIT
#include "heapkit/stats/fragmentation.hpp"

#include <doctest/doctest.h>
#include <numeric>

using namespace heapkit;
using namespace heapkit::stats;

namespace {

// Bins of 96, 112 and 14336 bytes (the largest small class); large objects from 16384.
JemallocStats figures() {
    JemallocStats stats;
    stats.large_minclass = 16384;
    stats.merged.bins = {
        // 96: 3 slabs of 128, 100 used: 284 free regions, 27264 bytes
        BinStats{96, 128, 12288, 100, 3, 3},
        // 112: 1 slab of 256 (28672 bytes), 10 used
        BinStats{112, 256, 28672, 10, 1, 1},
        // 14336: 1 slab of 4 (57344 bytes), 1 used
        BinStats{14336, 4, 57344, 1, 1, 1},
    };
    return stats;
}

// One sample per (objects, bytes), each on a location of its own.
Profile profile_of(std::initializer_list<std::pair<int64_t, int64_t>> samples) {
    Profile profile;
    profile.sources = {"heap"};
    for (auto [objects, bytes] : samples) {
        auto id = static_cast<uint32_t>(profile.locations.size());
        Location location;
        location.address = 0x1000 + id;
        profile.locations.push_back(location);
        HeapValues values;
        values.inuse_objects = objects;
        values.inuse_space = bytes;
        values.alloc_objects = 7; // a dump's alloc_* are replaced
        profile.add_sample({&id, 1}, values);
    }
    return profile;
}

int64_t charged(const Profile& profile, size_t sample, SampleType slot) {
    return value_of(profile.samples[sample].values, slot);
}

} // namespace

TEST_CASE("heapkit::stats::charge_fragmentation") {
    SUBCASE("a bin's bytes and regions are split whole, adding up exactly") {
        // Three stacks of 96-byte objects, alike: 27264 and 284 do not divide by 3.
        Profile profile = profile_of({{10, 960}, {10, 960}, {10, 960}});
        REQUIRE(charge_fragmentation(profile, figures(), "stats.json"));
        int64_t space = 0, objects = 0;
        for (size_t s = 0; s < 3; ++s) {
            space += charged(profile, s, fragmentation_space_slot);
            objects += charged(profile, s, fragmentation_objects_slot);
            CHECK(charged(profile, s, fragmentation_space_slot) >= 27264 / 3);
            CHECK(charged(profile, s, SampleType::inuse_space) == 960);
        }
        CHECK(space == 27264);
        CHECK(objects == 284);
        CHECK(sample_type_named(profile, "fragmentation_space") == fragmentation_space_slot);
        CHECK(profile.default_type == fragmentation_space_slot);
        CHECK(is_fragmentation_estimate(profile));
        CHECK(profile.notes.front().find("estimate") != std::string::npos);
    }
    SUBCASE("in proportion to live objects") {
        Profile profile = profile_of({{300, 28800}, {100, 9600}});
        REQUIRE(charge_fragmentation(profile, figures(), "stats.json"));
        CHECK(charged(profile, 0, fragmentation_space_slot) == 20448);
        CHECK(charged(profile, 1, fragmentation_space_slot) == 6816);
    }
    SUBCASE("a stack's class is the nearest its average; large objects are charged nothing") {
        // 96.45 bytes (jemalloc's unbiased counts): 96, not 112. 15000: 14336 (nearer than
        // 16384). 16000 and 1 MiB: large.
        Profile profile = profile_of({{100, 9645}, {1, 15000}, {1, 16000}, {2, 2 << 20}});
        REQUIRE(charge_fragmentation(profile, figures(), "stats.json"));
        CHECK(charged(profile, 0, fragmentation_space_slot) == 27264);
        CHECK(charged(profile, 1, fragmentation_space_slot) == 57344 - 14336);
        CHECK(charged(profile, 2, fragmentation_space_slot) == 0);
        CHECK(charged(profile, 2, fragmentation_objects_slot) == 0);
        CHECK(charged(profile, 3, fragmentation_space_slot) == 0); // 1 MiB each
    }
    SUBCASE("a bin no stack is in keeps its bytes on a pseudo-stack") {
        Profile profile = profile_of({{10, 960}});
        REQUIRE(charge_fragmentation(profile, figures(), "stats.json"));
        // The 112 and 14336 bins: two pseudo-stacks after the one sample.
        REQUIRE(profile.samples.size() == 3);
        const Sample& pseudo = profile.samples[1];
        const Location& where = profile.locations[profile.locations_of(pseudo).front()];
        CHECK(where.frames.front().name == "[unattributed: bin 112]");
        CHECK(value_of(pseudo.values, fragmentation_space_slot) == 28672 - 10 * 112);
        CHECK(value_of(pseudo.values, fragmentation_objects_slot) == 246);
        CHECK(value_of(pseudo.values, SampleType::inuse_space) == 0);
    }
    SUBCASE("refused: stats without bins, an allocation log") {
        Profile profile = profile_of({{10, 960}});
        JemallocStats no_bins = figures();
        no_bins.merged.bins.clear();
        auto result = charge_fragmentation(profile, no_bins, "stats.json");
        REQUIRE_FALSE(result);
        CHECK(result.error().message.find("stats.json") != std::string::npos);
        profile.from_log = true;
        result = charge_fragmentation(profile, figures(), "stats.json");
        REQUIRE_FALSE(result);
        CHECK(result.error().message.find("heap") != std::string::npos);
    }
}
