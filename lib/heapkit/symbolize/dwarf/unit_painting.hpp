// SPDX-License-Identifier: MIT
// The chain of functions holding each address of one compilation unit, for every address
// at once: what DwarfFrames::at finds by walking the unit's DIEs for one address
// (dwarf_frames.cpp: the function holding it, then descend() through its scopes), found
// for all of them from one reading of the unit (code_tree.hpp). An address index asks
// about every address of a module.
#pragma once

#include "heapkit/symbolize/dwarf/code_tree.hpp"

#include <cstdint>
#include <elfutils/libdw.h>
#include <vector>

namespace heapkit {

struct UnitPainting {
    struct Span {
        Dwarf_Addr low;  // the unit's addresses
        Dwarf_Addr high; // exclusive
        uint32_t first;  // its chain, dies[first, first + length): innermost first, as
        uint32_t length; // DwarfFrames' walk gives it
    };
    std::vector<Span> spans;     // by low, disjoint; an address in none is in no function
    std::vector<Dwarf_Die> dies; // the chains in one array (borrowed from libdw, as the
                                 // tree's): a vector each held a unit's spans twice over
};

// The painting of the unit `tree` holds.
UnitPainting paint_unit(const CodeTree& tree);

} // namespace heapkit
