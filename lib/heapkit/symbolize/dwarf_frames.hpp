// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"

#include <elfutils/libdwfl.h>
#include <vector>

namespace heapkit {

// The inline chain at `address` (libdwfl's address space of `module`, borrowed) from
// DWARF: innermost inlined function first, each with the file, line and column
// executing in it (the call site's, for every outer level), down to the function
// holding the code. Empty when the module has no DWARF for the address.
std::vector<Frame> dwarf_frames(Dwfl_Module* module, Dwarf_Addr address);

} // namespace heapkit
