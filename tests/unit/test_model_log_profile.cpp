// SPDX-License-Identifier: MIT
#include "heapkit/model/log_profile.hpp"

#include <cmath>
#include <doctest/doctest.h>

using namespace heapkit;

namespace {

ProfLog two_site_log(unsigned lg_sample_rate) {
    ProfLog log;
    log.source = "t.json";
    log.lg_sample_rate = lg_sample_rate;
    log.duration_nanos = 2'000'000'000;
    log.threads = {{0, ""}, {1, "worker"}};
    log.traces = {{0x1100, 0x1200}, {0x1300, 0x1200}, {0x1400}};
    // Site 0: freed at once (500 ns) by its own thread; 100 B and 3000 B objects.
    log.allocations.push_back({0, 0, 0, 2, 1000, 1500, 100});
    log.allocations.push_back({0, 0, 0, 2, 2000, 2500, 3000});
    // Site 1: lives 50 ms, freed by the other thread.
    log.allocations.push_back({0, 1, 1, 2, 0, 50'000'000, 4096});
    return log;
}

const std::vector<MapEntry> maps = {{0x1000, 0x2000, 0, true, false, "/bin/prog", 1}};

// jemalloc's formula for one sampled object of `size` bytes at period 2^lg.
double weight(double size, unsigned lg) {
    return 1.0 / (1.0 - std::exp(-size / std::ldexp(1.0, static_cast<int>(lg))));
}

const Sample& sample_through(const Profile& profile, uint64_t leaf) {
    for (const Sample& sample : profile.samples) {
        if (profile.locations[profile.locations_of(sample)[0]].address == leaf) {
            return sample;
        }
    }
    FAIL("no sample with leaf ", leaf);
    return profile.samples[0];
}

} // namespace

TEST_CASE("heapkit::build_log_profile unsamples each allocation on its own") {
    unsigned lg = 12; // 4096 B: sizes near the period, where averaging would be wrong
    Profile profile = build_log_profile(two_site_log(lg), maps, {});
    CHECK(profile.from_log);
    CHECK(profile.duration_nanos == 2'000'000'000);
    REQUIRE(profile.samples.size() == 2);
    const Sample& temporary = sample_through(profile, 0x1100);
    double w100 = weight(100, lg);
    double w3000 = weight(3000, lg);
    CHECK(temporary.values.alloc_objects == std::llround(w100 + w3000));
    CHECK(temporary.values.alloc_space == std::llround(100 * w100 + 3000 * w3000));
    CHECK(temporary.values.inuse_space == 0);
    const LogValues& at_once = profile.log_samples.at(temporary.log).values;
    CHECK(at_once.temporary_objects == temporary.values.alloc_objects);
    CHECK(at_once.temporary_space == temporary.values.alloc_space);
    CHECK(at_once.cross_thread_objects == 0);
    CHECK(at_once.byte_seconds == 0);

    const Sample& lived = sample_through(profile, 0x1300);
    double w4096 = weight(4096, lg);
    const LogValues& long_lived = profile.log_samples.at(lived.log).values;
    CHECK(long_lived.temporary_objects == 0);
    CHECK(long_lived.cross_thread_objects == std::llround(w4096));
    CHECK(long_lived.cross_thread_space == std::llround(4096 * w4096));
    CHECK(long_lived.byte_seconds == std::llround(4096 * w4096 * 0.05));
    REQUIRE(profile.log_samples.at(lived.log).lifetimes.size() == 1);
    CHECK(profile.log_samples.at(lived.log).lifetimes[0].nanos == 50'000'000);
}

TEST_CASE("heapkit::build_log_profile by freeing site and thread") {
    Profile profile = build_log_profile(two_site_log(0), maps, {true, true});
    CHECK(profile.log_free_sites);
    // All three were freed through trace 2, by two threads.
    REQUIRE(profile.samples.size() == 2);
    CHECK(profile.thread_labels == std::vector<std::string>{"t0", "worker"});
    int64_t objects = 0;
    for (const Sample& sample : profile.samples) {
        CHECK(profile.locations[profile.locations_of(sample)[0]].address == 0x1400);
        objects += sample.values.alloc_objects;
    }
    CHECK(objects == 3);
}

TEST_CASE("heapkit::value_of reads a log's types and refuses them on dumps") {
    Profile profile = build_log_profile(two_site_log(0), maps, {});
    const Sample& lived = sample_through(profile, 0x1300);
    CHECK(value_of(profile, lived, SampleType::cross_thread_objects) == 1);
    CHECK(value_of(profile, lived, SampleType::alloc_space) == 4096);
    CHECK_FALSE(check_sample_type(profile, SampleType::inuse_space));
    CHECK(check_sample_type(profile, SampleType::byte_seconds));
    Profile dump;
    CHECK_FALSE(check_sample_type(dump, SampleType::temporary_objects));
}
