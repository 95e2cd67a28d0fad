// SPDX-License-Identifier: MIT
// Internal to the heap_v2 parser: not installed.
#pragma once

#include "heapkit/util/pod_vector.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace heapkit {

// Gives each distinct frame address an id, in order of first appearance, appending it to
// `addresses` (RawDump::addresses). Open addressing with linear probing at most half
// full: one lookup per frame of the dump is the cost, so no node allocation, no
// std::hash (identity on integers: aligned addresses would share buckets). A slot is 8
// bytes, the id and 32 bits of the address's hash, the address itself being read from
// `addresses` only when the hashes agree: a dump of tens of millions of distinct
// addresses made a table of gigabytes with the address in each slot.
class AddressIds {
public:
    static constexpr uint32_t full = std::numeric_limits<uint32_t>::max();

    explicit AddressIds(PodVector<uint64_t>& addresses)
        : m_addresses(addresses) {
        rehash(1 << 12);
    }

    // Starts loading the slot id_of(address) looks at first: a dump of tens of millions
    // of distinct addresses makes a table of hundreds of MB, a cache miss per lookup,
    // which the addresses of a stack asked before their ids overlap (issue 47).
    void prefetch(uint64_t address) const {
        __builtin_prefetch(&m_slots[slot_of(hash_of(address))]);
    }

    // The id of `address`, or `full` when 2^32 - 1 distinct addresses are taken.
    uint32_t id_of(uint64_t address) {
        uint64_t hash = hash_of(address);
        auto tag = static_cast<uint32_t>(hash);
        for (size_t i = slot_of(hash);; i = (i + 1) & m_mask) {
            Slot& slot = m_slots[i];
            if (slot.id == full) {
                return insert(slot, address, tag);
            }
            if (slot.tag == tag && m_addresses[slot.id] == address) {
                return slot.id;
            }
        }
    }

private:
    struct Slot {
        uint32_t id = full; // `full` marks an empty slot
        uint32_t tag = 0;   // the low half of the address's hash
    };

    // Fibonacci hashing: the high bits of the product mix every bit of the address.
    static uint64_t hash_of(uint64_t address) { return address * 0x9e3779b97f4a7c15u; }
    size_t slot_of(uint64_t hash) const { return static_cast<size_t>(hash >> m_shift); }

    uint32_t insert(Slot& slot, uint64_t address, uint32_t tag) {
        size_t id = m_addresses.size();
        if (id >= full) {
            return full;
        }
        slot = {static_cast<uint32_t>(id), tag};
        m_addresses.push_back(address);
        if (2 * m_addresses.size() > m_slots.size()) {
            rehash(2 * m_slots.size());
        }
        return static_cast<uint32_t>(id);
    }

    void rehash(size_t size) {
        m_slots = PodVector<Slot>(); // the old table goes before the new one is made
        m_slots.resize(size, Slot{});
        m_mask = size - 1;
        m_shift = 64 - static_cast<unsigned>(__builtin_ctzll(size));
        constexpr size_t ahead = 16; // slots loading while one is written
        for (size_t id = 0; id < m_addresses.size(); ++id) {
            if (id + ahead < m_addresses.size()) {
                prefetch(m_addresses[id + ahead]);
            }
            uint64_t hash = hash_of(m_addresses[id]);
            size_t i = slot_of(hash);
            while (m_slots[i].id != full) {
                i = (i + 1) & m_mask;
            }
            m_slots[i] = {static_cast<uint32_t>(id), static_cast<uint32_t>(hash)};
        }
    }

    PodVector<uint64_t>& m_addresses;
    PodVector<Slot> m_slots; // huge pages: a lookup is a cache miss, not also a TLB miss
    size_t m_mask = 0;
    unsigned m_shift = 64;
};

} // namespace heapkit
