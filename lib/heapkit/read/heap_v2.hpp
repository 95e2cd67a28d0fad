// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/read/raw_dump.hpp"
#include "heapkit/read/stack_consumer.hpp"
#include "heapkit/util/error.hpp"

#include <functional>
#include <string_view>

namespace heapkit {

// Told now and then that the parser is done with the text before `position`, so that
// the owner of a mapped input can give those pages back (InputBuffer::release_before).
using ParsedUpTo = std::function<void(const char* position)>;

// Parses a jemalloc heap_v2 dump (formats.md §1). `source` names the input in
// messages; `first_line` is the line number of text[0] within that input (a jeprof
// symbolized file carries the dump after its symbol section). `parsed_up_to` may be
// empty. With a `consumer`, each stack goes to it as it is read and the dump returned
// has no stacks (stacks, frames and stack_threads stay empty).
Result<RawDump> parse_heap_v2(std::string_view text, std::string_view source, size_t first_line = 1,
                              const ParsedUpTo& parsed_up_to = {},
                              StackConsumer* consumer = nullptr);

} // namespace heapkit
