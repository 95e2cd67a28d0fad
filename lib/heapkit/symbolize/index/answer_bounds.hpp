// SPDX-License-Identifier: MIT
// Where the answer of ElfModule::frames_at can change: between two consecutive bounds,
// every address gets the same frames. An address index (address_index.hpp) asks once per
// stretch between bounds instead of once per address.
#pragma once

#include "heapkit/symbolize/dwarf/code_tree.hpp"
#include "heapkit/symbolize/dwarf/line_positions.hpp"

#include <cstdint>
#include <elfutils/libdwfl.h>
#include <functional>
#include <utility>
#include <vector>

namespace heapkit {

// Appends the ELF vaddrs (libdwfl's addresses at bias 0) where `module`'s DWARF answers
// may change: each compilation unit's ranges, each line-table row, and the ranges of
// every function, inlined instance and lexical block (through namespaces, types and
// imported partial units, as DwarfFrames finds them). Nothing when it has no DWARF.
// `scopes` gains those functions', instances' and blocks' ranges [low, high): an address
// in none of them has no DWARF frames (DwarfFrames::at answers nothing). Each unit's
// scopes are read once, into a CodeTree, handed to `visit_unit` with the unit's DIE (both
// borrowed for the call) for the lookups to use too. The line tables are read through
// `lines` where it can (it keeps their answers for the lookups), else through libdw.
using UnitVisitor = std::function<void(Dwarf_Die* cu, const CodeTree& tree)>;
void append_dwarf_bounds(Dwfl_Module* module, std::vector<uint64_t>& bounds,
                         std::vector<std::pair<uint64_t, uint64_t>>& scopes,
                         const UnitVisitor& visit_unit, LinePositions* lines = nullptr);

} // namespace heapkit
