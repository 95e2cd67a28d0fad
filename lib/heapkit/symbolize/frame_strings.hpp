// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/string_pool.hpp"

#include <string_view>
#include <unordered_map>

namespace heapkit {

// The texts of the frames being resolved: kept in a profile's pool, and each mangled
// name demangled once however many addresses lie in its function (demangling a long
// C++ name costs more than the lookup that found it).
class FrameStrings {
public:
    explicit FrameStrings(StringPool& pool) // borrowed; outlives this
        : m_pool(pool) {}

    std::string_view intern(std::string_view text) { return m_pool.intern(text); }

    // The display form of linker symbol `symbol` (see demangle()), interned.
    std::string_view demangled(std::string_view symbol);

private:
    StringPool& m_pool;
    std::unordered_map<std::string_view, std::string_view> m_demangled; // interned keys
};

} // namespace heapkit
