// SPDX-License-Identifier: MIT
#pragma once

#include <elfutils/libdwfl.h>
#include <string>
#include <vector>

namespace heapkit {

// Where libdwfl looks for separate debug information: the file itself, its
// .gnu_debuglink next to it, in .debug/ and under /usr/lib/debug/<dir>/ (CRC checked),
// /usr/lib/debug/.build-id/xx/rest.debug, and the same layouts under every extra
// directory; debuginfod only when DEBUGINFOD_URLS is set (elfutils' own rule).
//
// libdwfl keeps pointers to the callbacks and to the path string for the life of every
// Dwfl made with them, so this object must outlive those sessions; it cannot move.
class DebugSearch {
public:
    explicit DebugSearch(const std::vector<std::string>& extra_dirs);
    DebugSearch(const DebugSearch&) = delete;
    DebugSearch& operator=(const DebugSearch&) = delete;

    const Dwfl_Callbacks* callbacks() const { return &m_callbacks; }

private:
    std::string m_path;
    char* m_path_pointer = nullptr; // points into m_path; libdwfl reads it through a char**
    Dwfl_Callbacks m_callbacks{};
};

} // namespace heapkit
