// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/frame_entries.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace heapkit;

namespace {

// `leaf` and `outer`: literals (a Frame views its texts).
std::vector<Frame> chain(std::string_view leaf, std::string_view outer) {
    return {Frame{leaf, "", "inline.h", 12, 5, 10},
            Frame{outer, "_Z5outerv", "main.cpp", 40, 0, 30}};
}

} // namespace

TEST_CASE("kept answers: the first answer for an address stays, none is not missing") {
    FrameEntries entries;
    CHECK(entries.add(0x1000, chain("leaf()", "outer()")));
    CHECK(entries.add(0x2000, {}));
    CHECK_FALSE(entries.add(0x1000, chain("other()", "outer()"))); // the first answer stays
    REQUIRE(entries.size() == 2);
    REQUIRE(entries.find(0x2000));
    CHECK(entries.find(0x2000)->empty()); // known to be unnamed, unlike a missing entry
    CHECK_FALSE(entries.find(0x4000));
    std::span<const Frame> leaf_chain = *entries.find(0x1000);
    REQUIRE(leaf_chain.size() == 2);
    CHECK(leaf_chain[0].name == "leaf()");
    CHECK(leaf_chain[1].system_name == "_Z5outerv");
    CHECK(leaf_chain[0].column == 5);
}
