// SPDX-License-Identifier: MIT
#include "heapkit/emit/writers.hpp"
#include "test_profiles.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

namespace {

int64_t total(const Profile& profile) {
    int64_t sum = 0;
    for (const Sample& sample : profile.samples) {
        sum += sample.values.inuse_space;
    }
    return sum;
}

} // namespace

TEST_CASE("heapkit::subtract_base leaves the profile less the base, by frame names") {
    Profile after = test::named_profile({{{"main", "grew"}, 3000}, {{"main", "same"}, 500}});
    // Another run: other names first, so the addresses of grew and same differ.
    Profile before = test::named_profile(
        {{{"main", "gone"}, 700}, {{"main", "same"}, 500}, {{"main", "grew"}, 1000}});
    size_t samples = after.samples.size() + before.samples.size();
    REQUIRE(subtract_base(after, before));
    CHECK(after.samples.size() == samples);
    CHECK(total(after) == 3000 + 500 - 700 - 500 - 1000);
    // Views meet frames by name: what is left per stack is the change.
    FoldedOptions folded;
    CHECK(*write_folded(after, folded) == "main;gone -700\nmain;grew 2000\n");
}

TEST_CASE("heapkit::subtract_base of a profile from itself leaves nothing to show") {
    Profile profile = test::named_profile({{{"main", "a"}, 10}, {{"main", "b"}, 20}});
    Profile base = profile;
    REQUIRE(subtract_base(profile, base));
    CHECK(total(profile) == 0);
    CHECK(*write_folded(profile, {}) == "");
}
