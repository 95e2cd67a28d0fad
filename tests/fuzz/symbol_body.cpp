// SPDX-License-Identifier: MIT
// Any bytes as the body of POST /pprof/symbol (runtime/pages/heap_pages.cpp): '+'-joined hex
// addresses, parsed as jeprof sends them (naming them needs this process's files, which
// the symbolizer target covers).
#include "heapkit/runtime/pages/heap_pages.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view body(reinterpret_cast<const char*>(data), size);
    auto addresses = heapkit::runtime::symbol_addresses(body);
    // Each address takes at least a digit ("0x" is optional), and a '+' between two.
    if (addresses && addresses->size() * 2 > body.size() + 1) {
        std::abort();
    }
    return 0;
}
