// SPDX-License-Identifier: MIT
// The report's prefix tree's children by (parent, frame), for ReportData: 8 bytes a slot.
#pragma once

#include "heapkit/util/pod_vector.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace heapkit {

// Open addressing over one flat array whose slot holds a child node and a 32-bit tag of
// its key; the key itself is read back from the tree's own arrays (the node's parent and
// frame) when a tag matches. FlameChildIndex (emit/flame/tables.hpp) keeps the 8-byte key
// again beside the node: on a million stacks (2.4 M nodes in 4.2 M slots) that copy was
// 32 MiB of the writer's peak, held beside the loaded profile.
class PrefixChildren {
public:
    static constexpr uint32_t none = UINT32_MAX;

    PrefixChildren();
    // The child of `parent` (its node + 1; 0 for a root) whose frame is `frame`, or none
    // with `slot` set where add() puts it. `parents` (-1 for a root) and `frames` are the
    // tree's, per node: every node added so far.
    uint32_t find(uint32_t parent, uint32_t frame, std::span<const int32_t> parents,
                  std::span<const uint32_t> frames, size_t& slot) const;
    // Adds `node`, the child find() did not find, at its `slot`.
    void add(uint32_t parent, uint32_t frame, uint32_t node, size_t slot);

private:
    struct Slot {
        uint32_t tag = 0;
        uint32_t node = none; // none: empty
    };
    // The top half of the key's Fibonacci hash: its top bits are also the key's first slot,
    // so the table grows from the tags alone, without reading the tree.
    static uint32_t tag_of(uint32_t parent, uint32_t frame);
    size_t first_slot(uint32_t tag) const { return tag >> m_shift; }
    void grow();

    PodVector<Slot> m_slots;
    size_t m_count = 0;
    unsigned m_shift = 32; // 32 less log2 of the slots
};

} // namespace heapkit
