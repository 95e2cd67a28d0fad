// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <elfutils/libdwfl.h>
#include <functional>
#include <gelf.h>
#include <string_view>
#include <vector>

namespace heapkit {

// One defined, named symbol as libdwfl reports it.
struct DefinedSymbol {
    const GElf_Sym& symbol;
    GElf_Addr address; // st_value adjusted as libdwfl does (the ELF vaddr at bias 0)
    const char* name;  // into libelf's string table, valid while the module lives
    int index;         // in the module's symbol table
    GElf_Word section; // section index in `elf` (SHN_ABS and the like included)
    Elf* elf;          // the file whose table holds the symbol; borrowed
    Dwarf_Addr bias;   // `elf`'s bias: section addresses plus this are libdwfl's
};

// Calls `visit` for every defined, named symbol of `module` (.symtab, else .dynsym, and
// any .gnu_debugdata).
void for_each_defined_symbol(Dwfl_Module* module,
                             const std::function<void(const DefinedSymbol&)>& visit);

// A module's symbol table sorted by address, for many lookups. libdwfl's own
// dwfl_module_addrinfo scans every symbol on every call, which made a big stripped
// program's symbol table the slowest part of a run.
//
// The choice among symbols follows libdwfl's: code, data and untyped symbols that are
// defined; of those whose [value, value + size) holds the address, the one with the
// highest value, then the strongest binding (global, weak, local), then the first in
// table order. When no sized symbol holds it, a sizeless symbol (an assembly label such
// as ld.so's _dl_start_user) holds the addresses from its value up to the next symbol
// or the end of its section, whichever comes first.
class SymbolIndex {
public:
    // Reads every symbol of `module` (.symtab, else .dynsym, and any .gnu_debugdata).
    explicit SymbolIndex(Dwfl_Module* module);

    // The name (into libelf's string table, valid while the module lives) of the symbol
    // holding ELF vaddr `vaddr`, or null.
    const char* name_at(uint64_t vaddr) const;

    // True when a symbol other than name_at()'s, spelled `name` (or `name` with a GCC
    // suffix: "name.lto_priv.0"), holds ELF vaddr `vaddr` from the same start and binds
    // as strongly: two functions whose identical code the toolchain folded into one
    // (CPython's _tmp_116_rule and _tmp_245_rule), not an internal alias of an exported
    // name (__GI_setlocale, local, under setlocale, global).
    bool has_folded_twin(uint64_t vaddr, std::string_view name) const;

    // Appends where each symbol's reach starts and ends (ELF vaddrs): name_at() gives
    // one answer between two consecutive such addresses.
    void append_bounds(std::vector<uint64_t>& bounds) const;

private:
    struct Symbol {
        uint64_t start;
        uint64_t end; // exclusive: start + size, or a sizeless label's reach (see above)
        bool sized;
        int binding; // higher is stronger
        uint32_t order;
        const char* name;
    };
    void bound_labels();
    const Symbol* holder(uint64_t vaddr) const; // name_at()'s symbol

    std::vector<Symbol> m_symbols; // by start, then preference
    std::vector<uint64_t> m_reach; // m_reach[i]: the largest end of symbols 0..i
};

} // namespace heapkit
