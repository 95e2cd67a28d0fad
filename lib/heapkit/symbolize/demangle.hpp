// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace heapkit {

// The human-readable form of a linker symbol: Itanium C++ ("_ZN3foo3barEv" ->
// "foo::bar()"), Rust legacy (hash suffix "::h<16 hex>" dropped) and Rust v0 ("_R...").
// Names that are not mangled come back unchanged.
std::string demangle(const std::string& symbol);

} // namespace heapkit
