// SPDX-License-Identifier: MIT
#include "heapkit/emit/flame/tables.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <utility>

namespace heapkit {
namespace {

// Open addressing wants a power-of-two slot count, at most half of them full.
constexpr size_t first_slots = 1024;

// No key is this: a node's parent is never FlameChildIndex::none.
constexpr uint64_t empty_key = UINT64_MAX;

} // namespace

FlameNameIndex::FlameNameIndex(FlameNames& names)
    : m_names(names) {
    m_slots.resize(first_slots);
}

uint32_t FlameNameIndex::intern(std::string_view name) {
    auto hash = static_cast<uint32_t>(std::hash<std::string_view>{}(name));
    size_t mask = m_slots.size() - 1;
    for (size_t s = hash & mask;; s = (s + 1) & mask) {
        Slot slot = m_slots[s];
        if (slot.id_plus_one == 0) {
            return add(name, hash, s);
        }
        if (slot.hash == hash && m_names[slot.id_plus_one - 1] == name) {
            return slot.id_plus_one - 1;
        }
    }
}

uint32_t FlameNameIndex::add(std::string_view name, uint32_t hash, size_t slot) {
    auto id = static_cast<uint32_t>(m_names.size());
    m_names.m_bytes.append(name.data(), name.size());
    m_names.m_starts.push_back(m_names.m_bytes.size());
    m_slots[slot] = Slot{hash, id + 1};
    if (m_names.size() * 4 > m_slots.size() * 3) {
        grow();
    }
    return id;
}

void FlameNameIndex::grow() {
    PodVector<Slot> slots;
    slots.resize(m_slots.size() * 2);
    size_t mask = slots.size() - 1;
    for (const Slot& slot : m_slots) {
        if (slot.id_plus_one != 0) {
            size_t s = slot.hash & mask;
            while (slots[s].id_plus_one != 0) {
                s = (s + 1) & mask;
            }
            slots[s] = slot;
        }
    }
    m_slots = std::move(slots);
}

FlameChildIndex::FlameChildIndex() {
    resize(first_slots);
}

// Fibonacci hashing: the top bits of the product depend on all of the key's.
size_t FlameChildIndex::slot_of(uint64_t key) const {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15) >> m_shift);
}

uint32_t FlameChildIndex::find(uint32_t parent, uint32_t name, size_t& slot) const {
    uint64_t key = key_of(parent, name);
    size_t mask = m_keys.size() - 1;
    for (slot = slot_of(key);; slot = (slot + 1) & mask) {
        if (m_keys[slot] == key) {
            return m_nodes[slot];
        }
        if (m_keys[slot] == empty_key) {
            return none;
        }
    }
}

void FlameChildIndex::add(uint32_t parent, uint32_t name, uint32_t node, size_t slot) {
    uint64_t key = key_of(parent, name);
    if (slot == no_slot) {
        size_t mask = m_keys.size() - 1;
        for (slot = slot_of(key); m_keys[slot] != empty_key; slot = (slot + 1) & mask) {
        }
    }
    m_keys[slot] = key;
    m_nodes[slot] = node;
    if (++m_count * 4 <= m_keys.size() * 3) { // up to three quarters full
        return;
    }
    PodVector<uint64_t> keys = std::move(m_keys);
    PodVector<uint32_t> nodes = std::move(m_nodes);
    resize(keys.size() * 2);
    for (size_t old = 0; old < keys.size(); ++old) {
        if (keys[old] != empty_key) {
            size_t free = slot_of(keys[old]);
            while (m_keys[free] != empty_key) {
                free = (free + 1) & (m_keys.size() - 1);
            }
            m_keys[free] = keys[old];
            m_nodes[free] = nodes[old];
        }
    }
}

void FlameChildIndex::resize(size_t slots) {
    m_keys = {};
    m_nodes = {};
    m_keys.resize(slots, empty_key);
    m_nodes.resize(slots);
    m_shift = 64 - static_cast<unsigned>(std::countr_zero(slots));
}

} // namespace heapkit
