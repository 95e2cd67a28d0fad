// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/symbolize/dwarf_scopes.hpp"
#include "heapkit/symbolize/frame_strings.hpp"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
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
    std::vector<Dwarf_Die> function_chain(Dwarf_Die* cu, Dwarf_Addr cu_address);
    // describe_function() once per DIE; `strings` must be the same on every call.
    Frame described(Dwarf_Die* die, FrameStrings& strings);

    Dwfl_Module* m_module;
    DwarfScopes m_scopes; // qualifies functions that have no linkage name
    std::unordered_map<Dwarf_Off, UnitIndex> m_units;   // by the CU DIE's offset
    std::unordered_map<const void*, Frame> m_described; // by the DIE's bytes (unique
                                                        // across the main and alt files)
};

} // namespace heapkit
