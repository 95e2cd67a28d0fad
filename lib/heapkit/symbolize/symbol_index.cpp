// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/symbol_index.hpp"

#include <algorithm>
#include <gelf.h>
#include <tuple>

namespace heapkit {
namespace {

int binding_strength(const GElf_Sym& symbol) {
    switch (GELF_ST_BIND(symbol.st_info)) {
    case STB_GLOBAL:
        return 3;
    case STB_WEAK:
        return 2;
    case STB_LOCAL:
        return 1;
    default:
        return 0;
    }
}

bool names_code(const GElf_Sym& symbol) {
    int type = GELF_ST_TYPE(symbol.st_info);
    return type != STT_SECTION && type != STT_FILE && type != STT_TLS;
}

} // namespace

void for_each_defined_symbol(
    Dwfl_Module* module,
    const std::function<void(const GElf_Sym&, GElf_Addr, const char*, int)>& visit) {
    int count = dwfl_module_getsymtab(module);
    for (int i = 1; i < count; ++i) {
        GElf_Sym symbol;
        GElf_Addr address = 0;
        GElf_Word section = 0;
        const char* name =
            dwfl_module_getsym_info(module, i, &symbol, &address, &section, nullptr, nullptr);
        if (name != nullptr && *name != '\0' && section != SHN_UNDEF) {
            visit(symbol, address, name, i);
        }
    }
}

SymbolIndex::SymbolIndex(Dwfl_Module* module) {
    for_each_defined_symbol(
        module, [this](const GElf_Sym& symbol, GElf_Addr address, const char* name, int index) {
            if (names_code(symbol)) {
                m_symbols.push_back({address, symbol.st_size, binding_strength(symbol),
                                     static_cast<uint32_t>(index), name});
            }
        });
    // At one address the preferred symbol comes last: lookups walk backwards.
    std::sort(m_symbols.begin(), m_symbols.end(), [](const Symbol& a, const Symbol& b) {
        return std::tie(a.start, a.binding, b.order) < std::tie(b.start, b.binding, a.order);
    });
    m_reach.reserve(m_symbols.size());
    uint64_t reach = 0;
    for (const Symbol& symbol : m_symbols) {
        reach = std::max(reach, symbol.start + std::max<uint64_t>(symbol.size, 1));
        m_reach.push_back(reach);
    }
}

const char* SymbolIndex::name_at(uint64_t vaddr) const {
    auto above = std::upper_bound(m_symbols.begin(), m_symbols.end(), vaddr,
                                  [](uint64_t value, const Symbol& s) { return value < s.start; });
    const Symbol* sizeless = nullptr;
    // Walk down from the closest symbol below; once no earlier symbol reaches the address
    // (m_reach), none can hold it.
    for (auto i = static_cast<size_t>(above - m_symbols.begin()); i-- > 0 && m_reach[i] > vaddr;) {
        const Symbol& symbol = m_symbols[i];
        if (symbol.size != 0 && vaddr - symbol.start < symbol.size) {
            return symbol.name; // the sized holder with the highest start, best binding
        }
        if (symbol.size == 0 && symbol.start == vaddr && sizeless == nullptr) {
            sizeless = &symbol;
        }
    }
    return sizeless == nullptr ? nullptr : sizeless->name;
}

} // namespace heapkit
