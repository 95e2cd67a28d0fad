// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/demangle.hpp"

#include <cstdlib>
#include <libiberty/demangle.h>
#include <memory>

namespace heapkit {

std::string demangle(const std::string& symbol) {
    // Only _Z (Itanium, which Rust legacy reuses) and _R (Rust v0) are mangled; asking
    // the demangler about plain C names wastes time and can mis-read short ones.
    if (symbol.size() < 3 || symbol[0] != '_' || (symbol[1] != 'Z' && symbol[1] != 'R')) {
        return symbol;
    }
    // DMGL_AUTO tries Rust before Itanium, as legacy Rust names are valid Itanium too.
    std::unique_ptr<char, decltype(&std::free)> text(
        cplus_demangle(symbol.c_str(), DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO), &std::free);
    return text ? std::string(text.get()) : symbol;
}

} // namespace heapkit
