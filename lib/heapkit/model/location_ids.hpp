// SPDX-License-Identifier: MIT
// Internal to build_profile: not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace heapkit {

// Gives each distinct (module, lookup address) one location id, as it is first met: open
// addressing with linear probing at most half full, 16 bytes a slot. A dump whose every
// frame has an address of its own makes tens of millions of locations; a node-based map
// took 64 bytes and an allocation for each.
class LocationIds {
public:
    static constexpr uint32_t none = std::numeric_limits<uint32_t>::max();

    LocationIds() { rehash(1 << 10); }

    // The id of (module, address): the one it has, or `next` (the caller's next id),
    // which it then takes; `added` says which.
    uint32_t id_of(uint32_t module, uint64_t address, uint32_t next, bool& added) {
        for (size_t i = slot_of(module, address);; i = (i + 1) & m_mask) {
            Slot& slot = m_slots[i];
            if (slot.id == none) {
                slot = {address, module, next};
                added = true;
                if (2 * ++m_count > m_slots.size()) {
                    rehash(2 * m_slots.size());
                }
                return next;
            }
            if (slot.address == address && slot.module == module) {
                added = false;
                return slot.id;
            }
        }
    }

private:
    struct Slot {
        uint64_t address = 0;
        uint32_t module = 0;
        uint32_t id = none; // `none` marks an empty slot
    };

    size_t slot_of(uint32_t module, uint64_t address) const {
        // Fibonacci hashing, as AddressIds: every bit of the key moves the slot.
        uint64_t key = address ^ (uint64_t{module} << 48 | uint64_t{module} >> 16);
        return static_cast<size_t>((key * 0x9e3779b97f4a7c15u) >> m_shift);
    }

    void rehash(size_t size) {
        std::vector<Slot> old(size);
        old.swap(m_slots);
        m_mask = size - 1;
        m_shift = 64 - static_cast<unsigned>(__builtin_ctzll(size));
        for (const Slot& slot : old) {
            if (slot.id != none) {
                size_t i = slot_of(slot.module, slot.address);
                while (m_slots[i].id != none) {
                    i = (i + 1) & m_mask;
                }
                m_slots[i] = slot;
            }
        }
    }

    std::vector<Slot> m_slots;
    size_t m_count = 0;
    size_t m_mask = 0;
    unsigned m_shift = 64;
};

} // namespace heapkit
