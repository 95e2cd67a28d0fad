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

void PrefixChildren::add(uint32_t parent, uint32_t frame, uint32_t node, size_t slot) {
    uint32_t tag = tag_of(parent, frame);
    if (slot == no_slot) {
        size_t mask = m_slots.size() - 1;
        for (slot = first_slot(tag); m_slots[slot].node != none; slot = (slot + 1) & mask) {
        }
    }
    m_slots[slot] = Slot{tag, node};
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
