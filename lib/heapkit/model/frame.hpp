// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string_view>

namespace heapkit {

// One source-level frame at a code address. A Location holds a chain of them. Its texts
// are views into a StringPool that outlives it: in a Profile, the profile's `strings`.
struct Frame {
    std::string_view name;        // display name (demangled); empty when unknown
    std::string_view system_name; // name as the symbol table spells it (mangled)
    std::string_view file;        // source file, when known
    uint32_t line = 0;            // for inlined frames: the line inside this function
    uint32_t column = 0;
    uint32_t start_line = 0; // first line of the function, when known
};

} // namespace heapkit
