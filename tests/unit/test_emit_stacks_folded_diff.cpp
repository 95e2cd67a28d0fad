// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/folded.hpp"
#include "heapkit/emit/writers.hpp"
#include "test_profiles.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

TEST_CASE("heapkit::write_folded_diff writes difffolded.pl's lines, stacks met by name") {
    Profile before = test::named_profile({{{"main", "gone"}, 50}, {{"main", "kept"}, 100}});
    // Another run: names in another order, so the same functions sit at other addresses.
    Profile after = test::named_profile(
        {{{"main", "new"}, 70}, {{"main", "kept"}, 300}, {{"main", "kept", "inner"}, 5}});
    std::string text =
        test::written([&](const Sink& sink) { return write_folded_diff(before, after, {}, sink); });
    CHECK(text == "main;gone 50 0\n"
                  "main;kept 100 300\n"
                  "main;kept;inner 0 5\n"
                  "main;new 0 70\n");
}

TEST_CASE("heapkit::fold_stack_changes hands over each stack once with both values") {
    Profile before = test::named_profile({{{"m", "a"}, 100}, {{"m", "c"}, 300}, {{"m", "e"}, 500}});
    Profile after =
        test::named_profile({{{"m", "b"}, 2000}, {{"m", "c"}, 3000}, {{"m", "f"}, 6000}});
    std::vector<std::tuple<std::string, int64_t, int64_t>> seen;
    REQUIRE(fold_stack_changes(before, after, {}, [&](const FoldedStack& stack) {
        seen.emplace_back(std::string(stack.frames), stack.before, stack.value);
        return Result<void>{};
    }));
    using Row = std::tuple<std::string, int64_t, int64_t>;
    CHECK(seen == std::vector<Row>{{"m;a", 100, 0},
                                   {"m;b", 0, 2000},
                                   {"m;c", 300, 3000},
                                   {"m;e", 500, 0},
                                   {"m;f", 0, 6000}});
}

TEST_CASE("heapkit::fold_stack_changes stops at the sink's first error") {
    Profile profile = test::named_profile({{{"m", "a"}, 100}, {{"m", "b"}, 200}});
    int calls = 0;
    auto stopped = fold_stack_changes(profile, profile, {}, [&](const FoldedStack&) {
        ++calls;
        return Result<void>(fail("full"));
    });
    REQUIRE_FALSE(stopped);
    CHECK(stopped.error().message == "full");
    CHECK(calls == 1);
}
