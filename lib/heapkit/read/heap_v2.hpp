// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/read/raw_dump.hpp"
#include "heapkit/util/error.hpp"

#include <string_view>

namespace heapkit {

// Parses a jemalloc heap_v2 dump (formats.md §1). `source` names the input in
// messages; `first_line` is the line number of text[0] within that input (a jeprof
// symbolized file carries the dump after its symbol section).
Result<RawDump> parse_heap_v2(std::string_view text, std::string_view source,
                              size_t first_line = 1);

} // namespace heapkit
