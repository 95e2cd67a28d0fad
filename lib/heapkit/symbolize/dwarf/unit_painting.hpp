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
        uint32_t first;  // its chain, chains[first, first + length): innermost first, as
        uint32_t length; // DwarfFrames' walk gives it
    };
    std::vector<Span> spans; // by low, disjoint; an address in none is in no function
    // The chains in one array, as indexes into `dies`, which holds each DIE once (borrowed
    // from libdw, as the tree's): a function's DIE is in the chain of every span inside
    // it, and a module's paintings are held until its last address is answered (a
    // Dwarf_Die each took 64 MB of libheapkit-agent-core.so's 316).
    std::vector<uint32_t> chains;
    std::vector<Dwarf_Die> dies;
};

// The painting of the unit `tree` holds.
UnitPainting paint_unit(const CodeTree& tree);

} // namespace heapkit
