// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/dump_labels.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

TEST_CASE("heapkit::dump_labels are base names, whole names where base names collide") {
    CHECK(dump_labels({"/a/x.heap", "y.heap", "<stdin>"}) ==
          std::vector<std::string>{"x.heap", "y.heap", "<stdin>"});
    CHECK(dump_labels({"/a/x.heap", "/b/x.heap", "/a/y.heap"}) ==
          std::vector<std::string>{"/a/x.heap", "/b/x.heap", "y.heap"});
    CHECK(dump_labels({"/a/x.heap", "/a/x.heap"}) == std::vector<std::string>{"x.heap", "x.heap"});
}
