// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/read/heap_v2.hpp"
#include "heapkit/read/raw_dump.hpp"
#include "heapkit/util/error.hpp"

#include <string_view>

namespace heapkit {

// True when `text` is a jeprof symbolized profile (what `jeprof --raw` writes).
bool is_jeprof_symbolized(std::string_view text);

// Parses `--- symbol` / `binary=` / `0xADDR a--b` lines / `---` / `--- heap`, followed
// by the heap_v2 dump as the service served it (formats.md §3).
// `consumer`: as for parse_heap_v2.
Result<RawDump> parse_jeprof_symbolized(std::string_view text, std::string_view source,
                                        const ParsedUpTo& parsed_up_to = {},
                                        StackConsumer* consumer = nullptr);

} // namespace heapkit
