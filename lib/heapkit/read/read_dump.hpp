// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/read/heap_v2.hpp"
#include "heapkit/read/raw_dump.hpp"
#include "heapkit/util/error.hpp"

#include <string>
#include <string_view>

namespace heapkit {

// Reads one input ("-" is standard input; gzip is inflated) holding either a raw
// heap_v2 dump or a jeprof symbolized profile. A regular file is mapped, not copied,
// and its pages leave memory as the parser goes by. A file's modification time is kept
// as the dump's. Text after the last newline is refused: jemalloc ends every line, so
// it is a dump cut short.
Result<RawDump> read_dump(const std::string& path);

// The same, for text already in memory. `parsed_up_to` may be empty. With a `consumer`,
// the stacks go to it as they are read (read/stack_consumer.hpp), not into the dump.
Result<RawDump> parse_dump(std::string_view text, std::string_view source,
                           const ParsedUpTo& parsed_up_to = {}, StackConsumer* consumer = nullptr);

} // namespace heapkit
