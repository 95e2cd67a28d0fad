// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/elf/symbol_index.hpp"

#include <algorithm>
#include <gelf.h>
#include <map>
#include <tuple>
#include <utility>

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

// The end (libdwfl's address space) of the section holding `symbol`, or its own address
// plus one when it has no allocated section (SHN_ABS, SHN_COMMON) or the header is
// unreadable. Section ends are cached: a table has few sections and many labels.
class SectionEnds {
public:
    uint64_t of(const DefinedSymbol& symbol) {
        if (symbol.elf == nullptr || symbol.section == SHN_ABS || symbol.section == SHN_COMMON) {
            return symbol.address + 1;
        }
        auto [it, inserted] = m_ends.try_emplace({symbol.elf, symbol.section}, 0);
        if (inserted) {
            GElf_Shdr header;
            Elf_Scn* section = elf_getscn(symbol.elf, symbol.section);
            if (section != nullptr && gelf_getshdr(section, &header) != nullptr &&
                (header.sh_flags & SHF_ALLOC) != 0) {
                it->second = symbol.bias + header.sh_addr + header.sh_size;
            }
        }
        return std::max(it->second, symbol.address + 1);
    }

private:
    std::map<std::pair<Elf*, GElf_Word>, uint64_t> m_ends;
};

} // namespace

void for_each_defined_symbol(Dwfl_Module* module,
                             const std::function<void(const DefinedSymbol&)>& visit) {
    int count = dwfl_module_getsymtab(module);
    for (int i = 1; i < count; ++i) {
        GElf_Sym symbol;
        GElf_Addr address = 0;
        GElf_Word section = 0;
        Elf* elf = nullptr;
        Dwarf_Addr bias = 0;
        const char* name =
            dwfl_module_getsym_info(module, i, &symbol, &address, &section, &elf, &bias);
        if (name != nullptr && *name != '\0' && section != SHN_UNDEF) {
            visit({symbol, address, name, i, section, elf, bias});
        }
    }
}

SymbolIndex::SymbolIndex(Dwfl_Module* module) {
    SectionEnds section_ends;
    for_each_defined_symbol(module, [&](const DefinedSymbol& defined) {
        if (!names_code(defined.symbol)) {
            return;
        }
        bool sized = defined.symbol.st_size != 0;
        // A label reaches at most its section's end here; bound_labels() stops it at the
        // next symbol.
        uint64_t end = sized ? defined.address + defined.symbol.st_size : section_ends.of(defined);
        m_symbols.push_back({defined.address, end, sized, binding_strength(defined.symbol),
                             static_cast<uint32_t>(defined.index), defined.name});
    });
    // At one address the preferred symbol comes last: lookups walk backwards.
    std::sort(m_symbols.begin(), m_symbols.end(), [](const Symbol& a, const Symbol& b) {
        return std::tie(a.start, a.binding, b.order) < std::tie(b.start, b.binding, a.order);
    });
    bound_labels();
    m_reach.reserve(m_symbols.size());
    uint64_t reach = 0;
    for (const Symbol& symbol : m_symbols) {
        reach = std::max(reach, symbol.end);
        m_reach.push_back(reach);
    }
}

void SymbolIndex::bound_labels() {
    // Backwards, so that `next` is the lowest start above the current one.
    uint64_t next = UINT64_MAX;
    for (size_t i = m_symbols.size(); i-- > 0;) {
        Symbol& symbol = m_symbols[i];
        if (!symbol.sized) {
            symbol.end = std::max(std::min(symbol.end, next), symbol.start + 1);
        }
        if (i == 0 || m_symbols[i - 1].start != symbol.start) {
            next = symbol.start;
        }
    }
}

const SymbolIndex::Symbol* SymbolIndex::holder(uint64_t vaddr) const {
    auto above = std::upper_bound(m_symbols.begin(), m_symbols.end(), vaddr,
                                  [](uint64_t value, const Symbol& s) { return value < s.start; });
    const Symbol* label = nullptr;
    // Walk down from the closest symbol below; once no earlier symbol reaches the address
    // (m_reach), none can hold it.
    for (auto i = static_cast<size_t>(above - m_symbols.begin()); i-- > 0 && m_reach[i] > vaddr;) {
        const Symbol& symbol = m_symbols[i];
        if (symbol.sized && vaddr < symbol.end) {
            return &symbol; // the sized holder with the highest start, best binding
        }
        if (!symbol.sized && vaddr < symbol.end && label == nullptr) {
            label = &symbol; // only when no sized symbol holds the address
        }
    }
    return label;
}

const char* SymbolIndex::name_at(uint64_t vaddr) const {
    const Symbol* symbol = holder(vaddr);
    return symbol == nullptr ? nullptr : symbol->name;
}

bool SymbolIndex::has_folded_twin(uint64_t vaddr, std::string_view name) const {
    const Symbol* chosen = holder(vaddr);
    if (chosen == nullptr || name.empty()) {
        return false;
    }
    auto spelled = [&](std::string_view symbol) {
        return symbol.starts_with(name) &&
               (symbol.size() == name.size() || symbol[name.size()] == '.');
    };
    if (spelled(chosen->name)) {
        return false; // the chosen symbol is the one DWARF names
    }
    auto first = std::lower_bound(m_symbols.begin(), m_symbols.end(), chosen->start,
                                  [](const Symbol& s, uint64_t value) { return s.start < value; });
    for (auto it = first; it != m_symbols.end() && it->start == chosen->start; ++it) {
        if (&*it != chosen && vaddr < it->end && it->binding >= chosen->binding &&
            spelled(it->name)) {
            return true;
        }
    }
    return false;
}

void SymbolIndex::append_bounds(std::vector<uint64_t>& bounds) const {
    for (const Symbol& symbol : m_symbols) {
        bounds.push_back(symbol.start);
        bounds.push_back(symbol.end);
    }
}

} // namespace heapkit
