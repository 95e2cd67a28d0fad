// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/read/raw_dump.hpp"
#include "heapkit/util/error.hpp"

#include <span>

namespace heapkit {

// Takes a dump's stacks one at a time, as the parser reads them, instead of their being
// kept in RawDump's arrays. A dump of millions of stacks is then held once, in whatever
// the consumer makes of it (a profile's samples), and not also as read: the parsed
// RawDump keeps the rest (header, threads, addresses, maps) and no stacks.
class StackConsumer {
public:
    virtual ~StackConsumer() = default;

    // The header has been read: `dump` has its source, sample period, totals and
    // threads, and no stacks yet. Called once per dump, before its first stack.
    virtual void begin(const RawDump& dump) = 0;

    // One stack: its frames as ids into the dump's `addresses` (leaf first; the ids of
    // later stacks may be past what is there now), its `t*` line and its `tN` lines. An
    // error's message says why, without file or line: the parser adds where.
    virtual Result<void> add(std::span<const uint32_t> frames, const SampledCounts& total,
                             std::span<const ThreadCounts> threads) = 0;
};

} // namespace heapkit
