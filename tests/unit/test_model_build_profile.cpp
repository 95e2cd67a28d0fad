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

namespace {

// The profile of `texts` built as the loader builds it, each stack a sample as it is
// parsed.
Profile streamed(const std::vector<std::string>& texts, bool per_thread) {
    ProfileStream stream(BuildOptions{per_thread});
    std::vector<RawDump> dumps;
    for (size_t i = 0; i < texts.size(); ++i) {
        auto dump = parse_dump(texts[i], fmt::format("d{}.heap", i), {}, &stream);
        REQUIRE(dump);
        CHECK(dump->stacks.empty());
        dumps.push_back(std::move(*dump));
    }
    return stream.finish(dumps);
}

Profile built(const std::vector<std::string>& texts, bool per_thread) {
    std::vector<RawDump> dumps;
    for (size_t i = 0; i < texts.size(); ++i) {
        auto dump = parse_dump(texts[i], fmt::format("d{}.heap", i));
        REQUIRE(dump);
        dumps.push_back(std::move(*dump));
    }
    return build_profile(dumps, BuildOptions{per_thread});
}

// Every sample as (values, thread, dump, its locations' module and address), in order.
std::vector<std::string> spelled(const Profile& profile) {
    std::vector<std::string> out;
    for (const Sample& sample : profile.samples) {
        std::string line = fmt::format("{} {} {} {} t{} d{}:", sample.values.alloc_objects,
                                       sample.values.alloc_space, sample.values.inuse_objects,
                                       sample.values.inuse_space, sample.thread, sample.dump);
        for (uint32_t l : profile.locations_of(sample)) {
            line += fmt::format(" {}:{}@{:x}", l, profile.locations[l].module,
                                profile.locations[l].address);
        }
        out.push_back(line);
    }
    return out;
}

} // namespace

TEST_CASE("heapkit::ProfileStream builds while parsing what build_profile builds") {
    // Stacks with nothing in them (their locations are still numbered, in the order
    // read) between others; a second dump of the same program elsewhere; a leaf that is
    // another stack's return address.
    std::string first = test::sample_dump;
    first.insert(first.find("@ 0x7f0000001010 0x555500001300"),
                 "@ 0x555500001a00 0x555500001201 0x7f0000002020\n"
                 "  t*: 0: 0 [0: 0]\n"
                 "  t0: 0: 0 [0: 0]\n");
    first.insert(first.find("\nMAPPED"), "@ 0x555500001100 0x555500001b00\n"
                                         "  t*: 0: 0 [0: 0]\n"
                                         "@ 0x555500001c00\n"
                                         "  t*: 1: 16 [1: 16]\n"
                                         "  t3: 0: 0 [0: 0]\n");
    std::string second = test::sample_dump;
    for (size_t at = second.find("5555000"); at != std::string::npos; at = second.find("5555000")) {
        second.replace(at, 7, "5566000");
    }
    for (bool per_thread : {false, true}) {
        CAPTURE(per_thread);
        Profile a = streamed({first, second}, per_thread);
        Profile b = built({first, second}, per_thread);
        CHECK(spelled(a) == spelled(b));
        REQUIRE(a.samples.size() == b.samples.size());
        CHECK(a.sample_locations.size() == b.sample_locations.size());
        REQUIRE(a.locations.size() == b.locations.size());
        for (size_t l = 0; l < a.locations.size(); ++l) {
            CHECK(a.locations[l].address == b.locations[l].address);
        }
        CHECK(a.modules.size() == b.modules.size());
        CHECK(a.thread_labels == b.thread_labels);
        CHECK(a.sources == b.sources);
        CHECK(a.has_accum == b.has_accum);
    }
    // The empty stacks left no frames behind, and numbered their locations first.
    Profile profile = streamed({first}, false);
    CHECK(profile.samples.size() == 4);
    CHECK(profile.locations[4].address == 0x555500001a00); // after stack 1's four
    size_t frames = 0;
    for (const Sample& sample : profile.samples) {
        CHECK(sample.first_location == frames);
        frames += sample.location_count;
    }
    CHECK(profile.sample_locations.size() == frames);
}
