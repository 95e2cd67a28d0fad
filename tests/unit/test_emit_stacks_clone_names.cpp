// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/clone_names.hpp"

#include <doctest/doctest.h>

using heapkit::without_clone_suffixes;

TEST_CASE("heapkit::without_clone_suffixes merges GCC's copies into their function") {
    CHECK(without_clone_suffixes("aeProcessEvents.part.0") == "aeProcessEvents");
    CHECK(without_clone_suffixes("make_buffer.constprop.12") == "make_buffer");
    CHECK(without_clone_suffixes("take.isra.0") == "take");
    CHECK(without_clone_suffixes("serverCron.cold") == "serverCron");
    CHECK(without_clone_suffixes("f.lto_priv.0") == "f");
    CHECK(without_clone_suffixes("f.constprop.0.isra.0") == "f");
    CHECK(without_clone_suffixes("f.part.0.cold") == "f");
    CHECK(without_clone_suffixes("ns::f(int) [clone .constprop.0]") == "ns::f(int)");
    CHECK(without_clone_suffixes("ns::f(int) [clone .isra.0] [clone .cold]") == "ns::f(int)");
}

TEST_CASE("heapkit::without_clone_suffixes leaves other names alone") {
    CHECK(without_clone_suffixes("main") == "main");
    CHECK(without_clone_suffixes("") == "");
    CHECK(without_clone_suffixes(".part.0") == ".part.0");
    CHECK(without_clone_suffixes("f.part") == "f"); // a kind alone is a clone too
    CHECK(without_clone_suffixes("f.12") == "f.12");
    CHECK(without_clone_suffixes("f.other.0") == "f.other.0");
    CHECK(without_clone_suffixes("std::vector<int>::at(unsigned long) const") ==
          "std::vector<int>::at(unsigned long) const");
    CHECK(without_clone_suffixes("f [clone x]") == "f [clone x]");
}
