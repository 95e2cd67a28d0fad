// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/frame_strings.hpp"

#include "heapkit/symbolize/demangle.hpp"

#include <string>

namespace heapkit {

std::string_view FrameStrings::demangled(std::string_view symbol) {
    if (auto it = m_demangled.find(symbol); it != m_demangled.end()) {
        return it->second;
    }
    std::string_view key = m_pool.intern(symbol);
    std::string_view display = m_pool.intern(demangle(std::string(symbol)));
    m_demangled.emplace(key, display);
    return display;
}

} // namespace heapkit
