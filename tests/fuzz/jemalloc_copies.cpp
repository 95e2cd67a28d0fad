// SPDX-License-Identifier: MIT
// Any bytes as an ELF file whose symbol table is searched for jemalloc's pair
// (runtime/jemalloc_copies.hpp): sections, string tables and segments bounds-checked.
#include "heapkit/runtime/jemalloc_copies.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

using namespace heapkit::runtime::jemalloc_copies_detail;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    MappedFile file(data, size);
    if (file.bytes == nullptr) {
        return 0;
    }
    bool has_symtab = false;
    SymbolTable table = symbol_table(file, &has_symtab);
    static const unsigned char code[64] = {};
    size_t names = 0;
    for (size_t i = 0; i < table.count; ++i) {
        const ElfW(Sym)& symbol = table.symbols[i];
        if (symbol.st_name >= table.strings_size) {
            continue;
        }
        const char* name = table.strings + symbol.st_name;
        names += ::strnlen(name, table.strings_size - symbol.st_name);
        static_cast<void>(same_code(file, symbol.st_value, reinterpret_cast<uintptr_t>(code)));
    }
    return names == SIZE_MAX ? 1 : 0;
}
