// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/pod_vector.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

// The lookup tables a FlameGraphBuilder fills: open addressing over flat arrays, as a
// big profile looks names and children up millions of times.
namespace heapkit {

// Frame names, each stored once and known by a 4-byte id.
class FlameNames {
public:
    FlameNames() { m_starts.push_back(0); }
    std::string_view operator[](uint32_t id) const {
        return {m_bytes.data() + m_starts[id],
                static_cast<size_t>(m_starts[id + 1] - m_starts[id])};
    }
    size_t size() const { return m_starts.size() - 1; }

private:
    friend class FlameNameIndex;

    PodVector<char> m_bytes;
    PodVector<uint64_t> m_starts; // name i is [starts[i], starts[i + 1])
};

// Finds a name's id in a FlameNames, adding the name when new. A slot holds the name's
// hash beside its id, so that a probe reads one cache line.
class FlameNameIndex {
public:
    explicit FlameNameIndex(FlameNames& names); // `names` must outlive the index
    uint32_t intern(std::string_view name);

private:
    struct Slot {
        uint32_t hash = 0;
        uint32_t id_plus_one = 0; // 0: empty
    };
    uint32_t add(std::string_view name, uint32_t hash, size_t slot);
    void grow();

    FlameNames& m_names;
    PodVector<Slot> m_slots;
};

// (parent node, name id) -> child node.
class FlameChildIndex {
public:
    static constexpr uint32_t none = UINT32_MAX;
    static constexpr size_t no_slot = SIZE_MAX;

    FlameChildIndex();
    // The child's node, or none with `slot` set where add() may put it.
    uint32_t find(uint32_t parent, uint32_t name, size_t& slot) const;
    // Adds a child not in the index, at find()'s `slot` or (no_slot) wherever it goes.
    void add(uint32_t parent, uint32_t name, uint32_t node, size_t slot = no_slot);

private:
    static uint64_t key_of(uint32_t parent, uint32_t name) { return uint64_t{parent} << 32 | name; }
    size_t slot_of(uint64_t key) const;
    void resize(size_t slots);

    PodVector<uint64_t> m_keys;
    PodVector<uint32_t> m_nodes;
    size_t m_count = 0;
    unsigned m_shift = 64;
};

} // namespace heapkit
