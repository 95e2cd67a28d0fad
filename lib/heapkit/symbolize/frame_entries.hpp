// SPDX-License-Identifier: MIT
// Answers kept in memory between calls (kept_symbols.hpp): on disk, every address of a
// build is answered by its address index (index/address_index.hpp) instead.
#pragma once

#include "heapkit/model/profile.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace heapkit {

// One build's kept answers: the frames at each vaddr (possibly none: known to be
// unnamed), all stored end to end rather than a vector per address.
class FrameEntries {
public:
    // The frames at `vaddr`, or nullopt when it has no entry.
    std::optional<std::span<const Frame>> find(uint64_t vaddr) const;
    // Adds an entry for `vaddr` unless there is one; true when added.
    bool add(uint64_t vaddr, std::span<const Frame> frames);
    size_t size() const { return m_ranges.size(); }

private:
    struct Range {
        size_t first;
        uint32_t count;
    };
    std::vector<Frame> m_frames;
    std::unordered_map<uint64_t, Range> m_ranges;
};

} // namespace heapkit
