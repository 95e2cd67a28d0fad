// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/debug_search.hpp"

namespace heapkit {

DebugSearch::DebugSearch(const std::vector<std::string>& extra_dirs)
    // Leading '+': check the CRC of files found through .gnu_debuglink. The empty first
    // element is the file's own directory; absolute elements also serve build-id lookups.
    : m_path("+:.debug:/usr/lib/debug") {
    for (const std::string& dir : extra_dirs) {
        m_path += ':';
        m_path += dir;
    }
    m_path_pointer = m_path.data();
    m_callbacks.find_elf = dwfl_build_id_find_elf;
    m_callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    m_callbacks.section_address = dwfl_offline_section_address;
    m_callbacks.debuginfo_path = &m_path_pointer;
}

} // namespace heapkit
