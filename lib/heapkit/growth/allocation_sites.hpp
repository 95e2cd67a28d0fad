// SPDX-License-Identifier: MIT
// Where each suspect of a series allocates: its leaf with the line, and what tells apart
// suspects that allocate at one site.
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/growth/stack_trends.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"

#include <span>
#include <string>
#include <vector>

namespace heapkit {

// The allocating frame (leaf) of each of `stacks` with "(file:line)", as
// FrameStyle::function_line spells it, from the last dump that holds the stack; the leaf
// as spelled when no line is known, or when `folded` spells lines or addresses already.
// Stacks of `stacks` that share a site are told apart: "site via F", F the frame where
// the stack parts from the others' (leaf upwards).
Result<std::vector<std::string>> allocation_sites(std::span<const Profile> dumps,
                                                  const FoldedOptions& folded,
                                                  std::span<const StackTrend> stacks);

} // namespace heapkit
