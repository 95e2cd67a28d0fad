// SPDX-License-Identifier: MIT
// Any bytes as a symbol name, also forced into the _Z (Itanium, Rust legacy) and _R
// (Rust v0) namespaces so that the demangler itself is reached.
#include "heapkit/symbolize/demangle.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string name(reinterpret_cast<const char*>(data), size);
    if (name.find('\0') != std::string::npos) {
        return 0; // symbol names are C strings
    }
    static_cast<void>(heapkit::demangle(name));
    static_cast<void>(heapkit::demangle("_Z" + name));
    static_cast<void>(heapkit::demangle("_R" + name));
    return 0;
}
