// SPDX-License-Identifier: MIT
// The HTML report's function-level tree as the page first shows it (no refinement): the
// prefix tree's frames merged by function name below their caller, numbered depth first
// with each node's callees in string id order, exactly as report_tree.js numbers it when
// it merges the prefixes itself. Sent with the data, so that the page draws Top and the
// flame graph as it opens instead of merging millions of prefixes first.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace heapkit {

// Per prefix-tree node (`parents`: each node's parent, -1 for a root, parents before
// their children; `names`: its function's string id, below `string_count`), its node in
// the function-level tree (the root, "all", is node 0) less its parent's node (0 for a
// root's parent): mostly small numbers, which compress well. `names` is taken, and let go
// of once merged: on a million stacks this is the writer's peak.
std::vector<int32_t> function_tree_steps(std::span<const int32_t> parents,
                                         std::vector<uint32_t> names, size_t string_count);

} // namespace heapkit
