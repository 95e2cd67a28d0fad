// SPDX-License-Identifier: MIT
#include "heapkit/report/prefix_children.hpp"

#include <bit>
#include <stdexcept>

namespace heapkit {
namespace {

// A power of two (the slot is the tag's top bits), at most three quarters full.
constexpr size_t first_slots = 1024;

} // namespace

PrefixChildren::PrefixChildren() {
    m_slots.resize(first_slots);
    m_shift = 32 - static_cast<unsigned>(std::countr_zero(first_slots));
}

uint32_t PrefixChildren::tag_of(uint32_t parent, uint32_t frame) {
    uint64_t key = uint64_t{parent} << 32 | frame;
    return static_cast<uint32_t>((key * 0x9e3779b97f4a7c15) >> 32);
}

uint32_t PrefixChildren::find(uint32_t parent, uint32_t frame, std::span<const int32_t> parents,
                              std::span<const uint32_t> frames, size_t& slot) const {
    uint32_t tag = tag_of(parent, frame);
    size_t mask = m_slots.size() - 1;
    for (slot = first_slot(tag);; slot = (slot + 1) & mask) {
        Slot here = m_slots[slot];
        if (here.node == none) {
            return none;
        }
        // A tag is half the key's hash: another key may share it, and the node says.
        if (here.tag == tag && frames[here.node] == frame &&
            static_cast<uint32_t>(parents[here.node] + 1) == parent) {
            return here.node;
        }
    }
}

void PrefixChildren::add(uint32_t parent, uint32_t frame, uint32_t node, size_t slot) {
    m_slots[slot] = Slot{tag_of(parent, frame), node};
    if (++m_count * 4 > m_slots.size() * 3) {
        grow();
    }
}

void PrefixChildren::grow() {
    if (m_shift == 0) { // 4 G slots: the tag has no bit left for more (3 G nodes)
        throw std::length_error("PrefixChildren: too many nodes");
    }
    PodVector<Slot> slots;
    slots.resize(m_slots.size() * 2);
    --m_shift;
    size_t mask = slots.size() - 1;
    for (const Slot& old : m_slots) {
        if (old.node != none) {
            size_t s = first_slot(old.tag);
            while (slots[s].node != none) {
                s = (s + 1) & mask;
            }
            slots[s] = old;
        }
    }
    m_slots = std::move(slots);
}

} // namespace heapkit
