// SPDX-License-Identifier: MIT
// Internal to build_profile: not installed.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/util/pod_vector.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace heapkit {

// Gives each distinct (module, lookup address) one location id, as it is first met: open
// addressing with linear probing at most three quarters full. A dump whose every frame
// has an address of its own makes tens of millions of locations; a node-based map took 64
// bytes and an allocation for each. A slot is 8 bytes, the id and 32 bits of the key's
// hash: the key itself is the location's, compared only when the hashes agree, so a
// longer probe costs little; at most half full, the table of 25 M locations took 512 MiB
// where it now takes 256 MiB (issue 47).
class LocationIds {
public:
    static constexpr uint32_t none = std::numeric_limits<uint32_t>::max();

    LocationIds() { rehash(1 << 10, {}); }

    // The id of (module, address), an index into `locations`, where every location
    // comes through here: the one it has, or a new one, locations.size(), whose location
    // the caller appends before the next call; `added` says which.
    // Starts loading the slot id_of(module, address) looks at first: tens of millions of
    // distinct locations make a table of hundreds of MB, a cache miss per lookup, which
    // lookups asked a few frames ahead overlap (issue 47).
    void prefetch(uint32_t module, uint64_t address) const {
        __builtin_prefetch(&m_slots[slot_of(hash_of(module, address))]);
    }

    uint32_t id_of(uint32_t module, uint64_t address, const std::vector<Location>& locations,
                   bool& added) {
        if (4 * locations.size() > 3 * m_slots.size()) {
            rehash(2 * m_slots.size(), locations);
        }
        auto next = static_cast<uint32_t>(locations.size());
        uint64_t hash = hash_of(module, address);
        auto tag = static_cast<uint32_t>(hash);
        for (size_t i = slot_of(hash);; i = (i + 1) & m_mask) {
            Slot& slot = m_slots[i];
            if (slot.id == none) {
                slot = {next, tag};
                added = true;
                return next;
            }
            if (slot.tag == tag && locations[slot.id].address == address &&
                locations[slot.id].module == module) {
                added = false;
                return slot.id;
            }
        }
    }

private:
    struct Slot {
        uint32_t id = none; // `none` marks an empty slot
        uint32_t tag = 0;   // the low half of the key's hash
    };

    static uint64_t hash_of(uint32_t module, uint64_t address) {
        // Fibonacci hashing, as AddressIds: every bit of the key moves the slot.
        uint64_t key = address ^ (uint64_t{module} << 48 | uint64_t{module} >> 16);
        return key * 0x9e3779b97f4a7c15u;
    }

    size_t slot_of(uint64_t hash) const { return static_cast<size_t>(hash >> m_shift); }

    // Rebuilt from `locations`, which holds every id given: the old table goes before the
    // new one is made.
    void rehash(size_t size, const std::vector<Location>& locations) {
        m_slots = PodVector<Slot>();
        m_slots.resize(size, Slot{});
        m_mask = size - 1;
        m_shift = 64 - static_cast<unsigned>(__builtin_ctzll(size));
        constexpr size_t ahead = 16; // slots loading while one is written
        for (size_t id = 0; id < locations.size(); ++id) {
            if (id + ahead < locations.size()) {
                prefetch(locations[id + ahead].module, locations[id + ahead].address);
            }
            uint64_t hash = hash_of(locations[id].module, locations[id].address);
            size_t i = slot_of(hash);
            while (m_slots[i].id != none) {
                i = (i + 1) & m_mask;
            }
            m_slots[i] = {static_cast<uint32_t>(id), static_cast<uint32_t>(hash)};
        }
    }

    PodVector<Slot> m_slots; // huge pages: a lookup is a cache miss, not also a TLB miss
    size_t m_mask = 0;
    unsigned m_shift = 64;
};

} // namespace heapkit
