// SPDX-License-Identifier: MIT
// Whether a file defines a symbol of a given name, asked of its own symbol tables.
//
// A stripped library keeps .dynsym only, with the GNU hash table ld.so looks names up
// in: one bucket and its short chain are read instead of every symbol and its name.
// Scanning each library's exports for one name (thousands of them in libcrypto or
// libstdc++, their strings paged in) had been a tenth of a warm run.
#pragma once

#include <gelf.h>
#include <string_view>

namespace heapkit {

// True when `elf` (borrowed) defines a symbol named `name` in .symtab or .dynsym:
// st_shndx not SHN_UNDEF. .dynsym is looked up through its GNU hash table where it has
// a usable one (the symbols it leaves unhashed, below its symoffset, are scanned), else
// scanned; .symtab is scanned.
bool defines_symbol(Elf* elf, std::string_view name);

} // namespace heapkit
