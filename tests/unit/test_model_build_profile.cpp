// SPDX-License-Identifier: MIT
#include "test_profiles.hpp"

using namespace heapkit;

TEST_CASE("heapkit::build_profile places addresses in mappings, main executable first") {
    Profile profile = test::make_profile(test::sample_dump);
    REQUIRE(profile.modules.size() == 2);
    CHECK(profile.modules[0].path == "/srv/app");
    CHECK(profile.modules[0].is_main);
    CHECK(profile.modules[0].file_offset == 0x1000);
    CHECK(profile.modules[1].path == "/lib/libjemalloc.so.2");
    CHECK(profile.period == 1);
    CHECK(profile.has_accum);
    CHECK(profile.sources == std::vector<std::string>{"test.heap"});
}

TEST_CASE("heapkit::build_profile moves every return address back by one") {
    Profile profile = test::make_profile(test::sample_dump);
    auto first = profile.locations_of(profile.samples.at(0));
    REQUIRE(first.size() == 4);
    CHECK(profile.locations[first[0]].address == 0x7f0000001010); // leaf: as is
    CHECK(profile.locations[first[1]].address == 0x7f000000201f);
    CHECK(profile.locations[first[3]].address == 0x5555000011ff);
    // Stack 2 shares its leaf with stack 1: one Location.
    CHECK(profile.locations_of(profile.samples.at(1))[0] == first[0]);
    // Outside every mapping: no module.
    CHECK(profile.locations[profile.locations_of(profile.samples.at(2))[0]].module == no_module);
}

TEST_CASE("heapkit::build_profile unsamples per stack, or per thread line") {
    Profile whole = test::make_profile(test::sample_dump);
    REQUIRE(whole.samples.size() == 3);
    CHECK(whole.samples[0].values.inuse_space == 8192);
    CHECK(whole.samples[1].values.inuse_space == 0);
    CHECK(whole.samples[1].values.alloc_objects == 10);
    CHECK(whole.samples[0].thread == -1);

    Profile threads = test::make_profile(test::sample_dump, true);
    REQUIRE(threads.samples.size() == 3);
    CHECK(threads.thread_labels == std::vector<std::string>{"main", "t1"});
    CHECK(threads.samples[0].thread == 0);
    CHECK(threads.samples[1].thread == 1);
    CHECK(threads.locations_of(threads.samples[2]).size() == 2);
}

TEST_CASE("heapkit::build_profile lets the thread samples of one stack share its locations") {
    Profile profile = test::make_profile("heap_v2/1\n"
                                         "  t*: 3: 3072 [0: 0]\n"
                                         "@ 0x10 0x20\n"
                                         "  t*: 3: 3072 [0: 0]\n"
                                         "  t0: 1: 1024 [0: 0]\n"
                                         "  t1: 0: 0 [0: 0]\n"
                                         "  t2: 2: 2048 [0: 0]\n"
                                         "\nMAPPED_LIBRARIES:\n",
                                         true);
    REQUIRE(profile.samples.size() == 2); // t1's empty sample left out
    CHECK(profile.samples[0].first_location == profile.samples[1].first_location);
    CHECK(profile.sample_locations.size() == 2);
    CHECK(profile.thread_labels == std::vector<std::string>{"t0", "t1", "t2"});
    CHECK(profile.locations[profile.locations_of(profile.samples[1])[1]].address == 0x1f);
}

TEST_CASE("heapkit::build_profile merges dumps, each in its own address space") {
    auto first = parse_dump(test::sample_dump, "a.heap");
    // The same program run again, loaded elsewhere (ASLR).
    std::string moved = test::sample_dump;
    for (size_t at = moved.find("5555000"); at != std::string::npos; at = moved.find("5555000")) {
        moved.replace(at, 7, "5566000");
    }
    auto second = parse_dump(moved, "b.heap");
    REQUIRE(first);
    REQUIRE(second);
    std::vector<RawDump> dumps;
    dumps.push_back(std::move(*first));
    dumps.push_back(std::move(*second));
    Profile profile = build_profile(dumps, {});
    CHECK(profile.samples.size() == 6);
    REQUIRE(profile.modules.size() == 3);
    CHECK(profile.modules[0].is_main);
    CHECK(profile.modules[1].is_main);
    CHECK(profile.modules[1].start == 0x556600001000);
    const Location& hold_b = profile.locations[profile.locations_of(profile.samples[3])[2]];
    CHECK(hold_b.address == 0x5566000010ff);
    CHECK(hold_b.module == 1);
    CHECK(profile.sources == std::vector<std::string>{"a.heap", "b.heap"});
}

TEST_CASE("heapkit::build_profile attaches names from a jeprof symbol section") {
    std::string text = std::string("--- symbol\nbinary=/srv/app\n") +
                       "0x00005555000010ff outer--inner\n---\n--- heap\n" + test::sample_dump;
    Profile profile = test::make_profile(text.c_str());
    const Location& hold = profile.locations[profile.locations_of(profile.samples[0])[2]];
    REQUIRE(hold.frames.size() == 2);
    CHECK(hold.frames[0].name == "inner"); // innermost first
    CHECK(hold.frames[1].name == "outer");
}
