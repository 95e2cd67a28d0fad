// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/read/raw_dump.hpp"
#include "heapkit/util/error.hpp"

#include <string_view>

namespace heapkit {

// Parses one /proc/<pid>/maps line: `start-end perms offset dev inode [path]`.
// Paths keep inner spaces; a trailing " (deleted)" is removed and flagged.
// `where` prefixes error messages ("heap.prof:42").
Result<MapEntry> parse_maps_line(std::string_view line, std::string_view where);

} // namespace heapkit
