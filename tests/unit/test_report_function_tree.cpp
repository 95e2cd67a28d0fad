// SPDX-License-Identifier: MIT
#include "heapkit/report/function_tree.hpp"

#include <doctest/doctest.h>

using heapkit::function_tree_steps;

TEST_CASE("heapkit::function_tree_steps merges frames by name below their caller, depth first") {
    // Prefixes (parents first), by function name's string id: two lines of main (5) at the
    // root; below them b (3) twice and a (2) twice, met b first; below b, c (7).
    std::vector<int32_t> parents = {-1, 0, 1, -1, 3, 3, 0};
    std::vector<uint32_t> names = {5, 3, 7, 5, 2, 3, 2};
    // The merged tree numbered depth first, callees in string id order: all 0, main 1,
    // a 2, b 3, c 4. Each prefix's node less its parent's node.
    std::vector<int32_t> nodes = {1, 3, 4, 1, 2, 3, 2};
    std::vector<int32_t> expected;
    for (size_t n = 0; n < parents.size(); ++n) {
        expected.push_back(nodes[n] - (parents[n] < 0 ? 0 : nodes[parents[n]]));
    }
    CHECK(function_tree_steps(parents, names, 8) == expected);
}

TEST_CASE("heapkit::function_tree_steps keeps a function called by itself apart at each depth") {
    std::vector<int32_t> parents = {-1, 0, 1, -1, 3};
    std::vector<uint32_t> names = {1, 1, 1, 2, 1};
    // all 0, f(1) 1, f 2, f 3, g(2) 4, f below g 5.
    CHECK(function_tree_steps(parents, names, 3) == std::vector<int32_t>{1, 1, 1, 4, 1});
}
