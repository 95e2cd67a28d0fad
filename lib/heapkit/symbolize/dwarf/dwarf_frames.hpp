// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/symbolize/dwarf/code_tree.hpp"
#include "heapkit/symbolize/dwarf/dwarf_scopes.hpp"
#include "heapkit/symbolize/dwarf/line_positions.hpp"
#include "heapkit/symbolize/dwarf/unit_painting.hpp"
#include "heapkit/symbolize/frame_strings.hpp"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

namespace heapkit {

// Inline chains from one module's DWARF. Keeps, per compilation unit, its functions
// sorted by address, built on the CU's first lookup: finding the function that holds an
// address by walking the CU's DIEs costs the whole CU for every address, which in a big
// C++ unit made each lookup a millisecond.
class DwarfFrames {
public:
    explicit DwarfFrames(Dwfl_Module* module) // borrowed; must have DWARF
        : m_module(module) {}

    // The inline chain at `address` (libdwfl's address space): innermost inlined
    // function first, each with the file, line and column executing in it (the call
    // site's, for every outer level), down to the function holding the code. Empty when
    // the module has no DWARF for the address. Texts are kept in `strings`.
    std::vector<Frame> at(Dwarf_Addr address, FrameStrings& strings);

    // The same answer as at(), for a caller that asks about every address of the module
    // (an address index): each unit's function trees are walked once, painting which
    // chain of DIEs each address falls in, instead of walking a function's DIEs on every
    // lookup. Keeps the painting: memory in proportion to the units asked about.
    std::vector<Frame> at_painted(Dwarf_Addr address, FrameStrings& strings);

    // Paints the unit `cu` for at_painted() from its scopes read already (`tree`, of the
    // same unit), instead of reading them again on its first lookup there. Both borrowed.
    void paint(Dwarf_Die* cu, const CodeTree& tree);

    // The line tables of the units read through it (answer_bounds.cpp, for an index)
    // answer this module's lookups there, instead of libdw's decoded tables. Made on the
    // first call.
    LinePositions& line_positions();

    // Where code executes inside one function of the chain.
    using Position = SourcePosition;

private:
    struct Function {
        Dwarf_Addr low;
        Dwarf_Addr high; // exclusive
        Dwarf_Die die;
    };
    struct UnitIndex {
        std::vector<Function> functions; // by low address
        std::vector<Dwarf_Addr> reach;   // reach[i]: the highest `high` of functions 0..i
    };
    const UnitIndex& index_of(Dwarf_Die* cu);
    UnitPainting& painting_of(Dwarf_Die* cu);
    std::vector<Frame> frames_of(Dwarf_Die* cu, std::span<Dwarf_Die> chain, Dwarf_Addr address,
                                 Dwarf_Addr bias, FrameStrings& strings);
    std::vector<Dwarf_Die> function_chain(Dwarf_Die* cu, Dwarf_Addr cu_address);
    // describe_function() once per DIE, for the FrameStrings of the current call.
    Frame described(Dwarf_Die* die, FrameStrings& strings);
    // `file` (libdw's) interned once; likewise.
    std::string_view file_name(const char* file, FrameStrings& strings);

    Dwfl_Module* m_module;
    DwarfScopes m_scopes; // qualifies functions that have no linkage name
    std::unordered_map<Dwarf_Off, UnitIndex> m_units;        // by the CU DIE's offset
    std::unordered_map<Dwarf_Off, UnitPainting> m_paintings; // likewise
    std::unordered_map<const void*, Frame> m_described;      // by the DIE's bytes (unique
                                                             // across the main and alt files)
    std::unordered_map<const void*, Position> m_call_sites;  // of inlined DIEs, likewise
    std::unordered_map<const char*, std::string_view> m_file_names; // by libdw's text
    std::unique_ptr<LinePositions> m_lines;                         // line_positions()
    std::vector<Dwarf_Die> m_chain; // at_painted()'s chain, its memory kept between calls
    uint64_t m_strings_serial = 0;  // the FrameStrings whose texts the two above view
};

} // namespace heapkit
