// SPDX-License-Identifier: MIT
// A tree's children by (parent, frame), for the report's two trees (ReportData's prefix
// tree, function_tree.cpp's tree merged by name): 8 bytes a slot.
#pragma once

#include "heapkit/util/pod_vector.hpp"

#include <cstddef>
#include <cstdint>

namespace heapkit {

// Open addressing over one flat array whose slot holds a child node and a 32-bit tag of
// its key; the key itself is read back from the tree's own arrays (the node's parent and
// frame) when a tag matches. FlameChildIndex (emit/flame/tables.hpp) keeps the whole
// 8-byte key beside the node, 12 bytes a slot: on a million stacks (2.4 M nodes in 4.2 M
// slots) 16 MiB more, held beside the loaded profile at the writer's peak.
class PrefixChildren {
public:
    static constexpr uint32_t none = UINT32_MAX;
    static constexpr size_t no_slot = SIZE_MAX;

    PrefixChildren();
    // The child of `parent` whose frame is `frame`, or none with `slot` set where add()
    // puts it. `is_child(node)` says whether `node`'s parent and frame (the tree's own) are
    // these: it is asked of the nodes whose tag is the key's.
    template <class IsChild>
    uint32_t find(uint32_t parent, uint32_t frame, IsChild is_child, size_t& slot) const {
        uint32_t tag = tag_of(parent, frame);
        size_t mask = m_slots.size() - 1;
        for (slot = first_slot(tag);; slot = (slot + 1) & mask) {
            Slot here = m_slots[slot];
            if (here.node == none) {
                return none;
            }
            if (here.tag == tag && is_child(here.node)) { // another key may share a tag
                return here.node;
            }
        }
    }
    // Adds `node`, a child not in the index, at find()'s `slot` or (no_slot) wherever it
    // goes.
    void add(uint32_t parent, uint32_t frame, uint32_t node, size_t slot = no_slot);

private:
    struct Slot {
        uint32_t tag = 0;
        uint32_t node = none; // none: empty
    };
    // The top half of the key's Fibonacci hash: its top bits are also the key's first slot,
    // so the table grows from the tags alone, without reading the tree.
    static uint32_t tag_of(uint32_t parent, uint32_t frame) {
        uint64_t key = uint64_t{parent} << 32 | frame;
        return static_cast<uint32_t>((key * 0x9e3779b97f4a7c15) >> 32);
    }
    size_t first_slot(uint32_t tag) const { return tag >> m_shift; }
    void grow();

    PodVector<Slot> m_slots;
    size_t m_count = 0;
    unsigned m_shift = 32; // 32 less log2 of the slots
};

} // namespace heapkit
