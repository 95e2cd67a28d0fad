// SPDX-License-Identifier: MIT
#include "heapkit/emit/writers.hpp"
#include "test_profiles.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

namespace {

Profile three_stacks() {
    return test::named_profile({{{"main", "serve", "parse"}, 100},
                                {{"main", "serve", "cache_put"}, 200},
                                {{"main", "log_line"}, 300}});
}

std::string filtered(const StackFilter& filter) {
    Profile profile = three_stacks();
    REQUIRE(filter_stacks(profile, filter));
    return *write_folded(profile, {});
}

} // namespace

TEST_CASE("heapkit::filter_stacks keeps the stacks through a focus frame") {
    CHECK(filtered({"serve", "", ""}) == "main;serve;cache_put 200\nmain;serve;parse 100\n");
    // A regex searched in the name, as pprof's -focus.
    CHECK(filtered({"^cache", "", ""}) == "main;serve;cache_put 200\n");
    CHECK(filtered({"parse|log", "", ""}) == "main;log_line 300\nmain;serve;parse 100\n");
    // pprof's syntax (RE2's): inline flags, which ECMAScript lacked.
    CHECK(filtered({"(?i)^CACHE_", "", ""}) == "main;serve;cache_put 200\n");
}

TEST_CASE("heapkit::filter_stacks leaves out the stacks through an ignored frame") {
    CHECK(filtered({"", "serve", ""}) == "main;log_line 300\n");
    CHECK(filtered({"serve", "parse", ""}) == "main;serve;cache_put 200\n");
    CHECK(filtered({}) == *write_folded(three_stacks(), {}));
}

TEST_CASE("heapkit::filter_stacks refuses an invalid regex") {
    Profile profile = three_stacks();
    auto refused = filter_stacks(profile, {"serve(", "", ""});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("serve(") != std::string::npos);
}

TEST_CASE("heapkit::filter_stacks hides matching frames and keeps their callers and callees") {
    // serve goes from the middle of two stacks: main calls parse and cache_put directly.
    CHECK(filtered({"", "", "^serve$"}) ==
          "main;cache_put 200\nmain;log_line 300\nmain;parse 100\n");
    // Hidden together with focus: the focus is matched first, on the whole stacks.
    CHECK(filtered({"serve", "", "serve"}) == "main;cache_put 200\nmain;parse 100\n");
    // A leaf hidden: its caller is the leaf, and stacks that become one add up.
    CHECK(filtered({"", "", "parse|cache_put"}) == "main;log_line 300\nmain;serve 300\n");
    Profile profile = three_stacks();
    auto matched = filter_stacks(profile, {"", "", "nothing_named_so"});
    REQUIRE(matched);
    CHECK_FALSE(matched->hide); // a pattern that hides nothing is told
}
