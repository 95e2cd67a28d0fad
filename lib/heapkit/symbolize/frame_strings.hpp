// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/string_pool.hpp"

#include <atomic>
#include <cstdint>
#include <string_view>
#include <unordered_map>

namespace heapkit {

// The texts of the frames being resolved: kept in a profile's pool, and each mangled
// name demangled once however many addresses lie in its function (demangling a long
// C++ name costs more than the lookup that found it).
class FrameStrings {
public:
    explicit FrameStrings(StringPool& pool) // borrowed; outlives this
        : m_pool(pool)
        , m_serial(++s_made) {}

    // Different for every FrameStrings made in this process (two may share an address
    // one after the other): what caches of its texts kept elsewhere compare with, to
    // know when they view another, possibly freed, pool.
    uint64_t serial() const { return m_serial; }

    std::string_view intern(std::string_view text) { return m_pool.intern(text); }

    // The display form of linker symbol `symbol` (see demangle()), interned.
    std::string_view demangled(std::string_view symbol);

private:
    static inline std::atomic<uint64_t> s_made{0};
    StringPool& m_pool;
    uint64_t m_serial;
    std::unordered_map<std::string_view, std::string_view> m_demangled; // interned keys
};

} // namespace heapkit
