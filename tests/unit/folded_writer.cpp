// SPDX-License-Identifier: MIT
#include "heapkit/emit/folded_writer.hpp"

#include "test_profiles.hpp"

using namespace heapkit;

TEST_CASE("heapkit::write_folded prints root-first stacks without allocator frames") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, test::app_names);
    // The leaf in libjemalloc stays unnamed; malloc is named and cut with it.
    CHECK(write_folded(profile, {}) == "main;0x900000 4096\n"
                                       "main;hold 8192\n");
}

TEST_CASE("heapkit::write_folded keeps allocator frames on request, unnamed as module+offset") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, test::app_names);
    FoldedOptions options;
    options.keep_allocator_frames = true;
    // 0x7f0000001010 is file offset 0x8000 + 0x1010 in libjemalloc.so.2.
    CHECK(write_folded(profile, options) == "main;0x900000 4096\n"
                                            "main;hold;malloc;libjemalloc.so.2+0x9010 8192\n");
}

TEST_CASE("heapkit::write_folded cuts unnamed frames of a jemalloc module at the leaf") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, {{0x555500001100 - 1, "hold"}, {0x555500001200 - 1, "main"}});
    profile.modules[1].is_allocator = true;
    // 0x555500001200 is left unnamed here: file offset 0x1000 + 0x200 in /srv/app.
    CHECK(write_folded(profile, {}) == "app+0x1200;0x900000 4096\n"
                                       "main;hold 8192\n");
}

// The churn stack has no malloc frame and its module is not known to be jemalloc: its
// unnamed leaf stays.
TEST_CASE("heapkit::write_folded sums identical stacks and picks the sample type") {
    Profile profile = test::make_profile(test::sample_dump);
    test::name_locations(profile, test::app_names);
    profile.samples.push_back(profile.samples[0]);
    FoldedOptions alloc;
    alloc.sample = SampleType::alloc_objects;
    CHECK(write_folded(profile, alloc) == "main;0x900000 1\n"
                                          "main;churn;libjemalloc.so.2+0x9010 10\n"
                                          "main;hold 4\n");
}

TEST_CASE("heapkit::write_folded prefixes thread frames") {
    Profile profile = test::make_profile(test::sample_dump, true);
    test::name_locations(profile, test::app_names);
    FoldedOptions options;
    options.thread_frames = true;
    options.sample = SampleType::alloc_space;
    CHECK(write_folded(profile, options) == "main;main;hold 8192\n"
                                            "t1;main;0x900000 4096\n"
                                            "t1;main;churn;libjemalloc.so.2+0x9010 1280\n");
}
