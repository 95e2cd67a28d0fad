// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/read/raw_dump.hpp"
#include "heapkit/util/error.hpp"

#include <string>
#include <string_view>

namespace heapkit {

// Reads one input ("-" is standard input; gzip is inflated) holding either a raw
// heap_v2 dump or a jeprof symbolized profile.
Result<RawDump> read_dump(const std::string& path);

// The same, for text already in memory.
Result<RawDump> parse_dump(std::string_view text, std::string_view source);

} // namespace heapkit
