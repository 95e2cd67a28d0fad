// SPDX-License-Identifier: MIT
// Where code executes, by each unit's line table, for a caller that asks about every
// address of a module (an address index). libdw keeps every unit's decoded line table
// until its session ends (it has no way to let go of one unit's): 63 MB of the 316 that
// libheapkit-agent-core.so's index build held. Here the tables are decoded in a libdw
// session of their own over the same file, ended every few hundred thousand rows, and
// each unit keeps only what a lookup answers: one row for each distinct address.
#pragma once

#include <cstdint>
#include <deque>
#include <elfutils/libdw.h>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace heapkit {

// Where code executes inside one function.
struct SourcePosition {
    const char* file = nullptr; // valid while the module is open (or its LinePositions)
    uint32_t line = 0;
    uint32_t column = 0;
};

class LinePositions {
public:
    // Reads `dwarf`'s units (borrowed; libdwfl's session of the module).
    explicit LinePositions(Dwarf* dwarf)
        : m_dwarf(dwarf) {}
    LinePositions(const LinePositions&) = delete;
    LinePositions& operator=(const LinePositions&) = delete;
    ~LinePositions() { end_session(); }

    // Reads the line table of `cu` (a unit of `dwarf`), appending each row's address plus
    // `bias` to `bounds`; false when it could not be read here (the caller reads it
    // through libdw's own session, which answers for that unit).
    bool read(Dwarf_Die* cu, Dwarf_Addr bias, std::vector<uint64_t>& bounds);

    // One unit's answers, as dwfl_module_getsrc and dwfl_lineinfo give them, and its file
    // names as dwarf_getsrcfiles and dwarf_filesrc do.
    class Unit {
    public:
        // The row executing at `address` (the unit's addresses) into `position`; false:
        // none.
        bool at(Dwarf_Addr address, SourcePosition& position) const;
        // The name of file `index` of the unit's line table; null when none.
        const char* file(uint32_t index) const;
        bool has_files() const { return m_has_files; }

    private:
        friend class LinePositions;
        std::vector<Dwarf_Addr> m_addresses; // distinct, ascending
        std::vector<SourcePosition> m_rows;  // the last row at each of them
        std::vector<bool> m_ends;            // whether that row ends a sequence
        std::vector<const char*> m_files;    // names, kept by LinePositions
        bool m_has_files = false;
    };

    // `cu`'s answers, read by read(); null for a unit it did not read.
    const Unit* unit(Dwarf_Die* cu) const;

private:
    Dwarf* session();
    void end_session();
    const char* kept(const char* name); // `name` copied once for the whole module

    Dwarf* m_dwarf;
    Dwarf* m_session = nullptr;                  // ours: what it decodes goes when it ends
    size_t m_session_rows = 0;                   // decoded since it began
    std::unordered_map<Dwarf_Off, Unit> m_units; // by the unit DIE's offset
    std::deque<std::string> m_names;             // never move
    std::unordered_map<std::string_view, const char*> m_name_ids;
};

} // namespace heapkit
