// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <elfutils/libdwfl.h>
#include <functional>
#include <gelf.h>
#include <vector>

namespace heapkit {

// Calls `visit(symbol, address, name, index)` for every defined, named symbol of `module`
// (.symtab, else .dynsym, and any .gnu_debugdata), `address` adjusted as libdwfl does.
void for_each_defined_symbol(
    Dwfl_Module* module,
    const std::function<void(const GElf_Sym&, GElf_Addr, const char*, int)>& visit);

// A module's symbol table sorted by address, for many lookups. libdwfl's own
// dwfl_module_addrinfo scans every symbol on every call, which made a big stripped
// program's symbol table the slowest part of a run.
//
// The choice among symbols is libdwfl's: code, data and untyped symbols that are
// defined; of those whose [value, value + size) holds the address, the one with the
// highest value, then the strongest binding (global, weak, local), then the first in
// table order; a sizeless symbol (an assembly label) only at its exact address.
class SymbolIndex {
public:
    // Reads every symbol of `module` (.symtab, else .dynsym, and any .gnu_debugdata).
    explicit SymbolIndex(Dwfl_Module* module);

    // The name (into libelf's string table, valid while the module lives) of the symbol
    // holding ELF vaddr `vaddr`, or null.
    const char* name_at(uint64_t vaddr) const;

private:
    struct Symbol {
        uint64_t start;
        uint64_t size;
        int binding; // higher is stronger
        uint32_t order;
        const char* name;
    };
    std::vector<Symbol> m_symbols; // by start, then preference
    std::vector<uint64_t> m_reach; // m_reach[i]: the largest end of symbols 0..i
};

} // namespace heapkit
