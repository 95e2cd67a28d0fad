// SPDX-License-Identifier: MIT
#pragma once

#include <elfutils/libdwfl.h>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// The extra directories a search looks in: `extra`, and the sysroot's /usr/lib/debug.
std::vector<std::string> debug_dirs_for(const std::vector<std::string>& extra,
                                        const std::string& sysroot);

// Where libdwfl looks for separate debug information: the file itself, its
// .gnu_debuglink next to it, in .debug/ and under /usr/lib/debug/<dir>/ (CRC checked),
// /usr/lib/debug/.build-id/xx/rest.debug, and the same layouts under every extra
// directory; debuginfod only when DEBUGINFOD_URLS is set.
//
// That last rule is ours: elfutils 0.188 dlopens libdebuginfod (and through it libcurl,
// gnutls, krb5, ldap: ~30 libraries, a third of a warm run's time and ~100 descriptors
// in a service) whenever a local search finds nothing, servers or not. So the search
// asks libdwfl only when DEBUGINFOD_URLS is set or some local file could be the answer.
//
// libdwfl keeps pointers to the callbacks and to the path string for the life of every
// Dwfl made with them, so this object must outlive those sessions; it cannot move.
class DebugSearch {
public:
    explicit DebugSearch(const std::vector<std::string>& extra_dirs);
    DebugSearch(const DebugSearch&) = delete;
    DebugSearch& operator=(const DebugSearch&) = delete;

    const Dwfl_Callbacks* callbacks() const { return &m_callbacks; }

    // Makes `module`'s debug-file searches use this object (through the module's
    // userdata, which libdwfl hands to the callback).
    void attach(Dwfl_Module* module) const;

    // True when some file libdwfl's local search would try for `file_name` exists: a
    // build-id path, or the debuglink's name (`debuglink`, else the file's name plus
    // ".debug") next to the file, in .debug/, or under a debug directory.
    bool may_find(Dwfl_Module* module, std::string_view file_name,
                  std::string_view debuglink) const;

    // The module's debug file found by build id under a debug directory, as a memory copy
    // with the DWARF that names need inflated (inflated_debug_file.hpp), its path put in
    // `*debuginfo_file_name` (malloc'ed, for libdwfl); -1 when there is none to inflate
    // (libdwfl's own search then finds the file as it is).
    int inflated_by_build_id(Dwfl_Module* module, char** debuginfo_file_name) const;

    // Why debug files found were not used (a section claiming more than it can hold), one
    // line each, naming the file; emptied.
    std::vector<std::string> take_warnings();

private:
    std::string m_path;
    std::vector<std::string> m_dirs; // m_path's elements, without the CRC flag
    char* m_path_pointer = nullptr;  // points into m_path; libdwfl reads it through a char**
    Dwfl_Callbacks m_callbacks{};
    // Filled from libdwfl's callbacks (const, and on the index builder's threads).
    mutable std::mutex m_mutex;
    mutable std::vector<std::string> m_warnings;
};

} // namespace heapkit
