// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/elf/symbol_lookup.hpp"

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace heapkit {
namespace {

struct SymbolTable {
    GElf_Shdr header;
    Elf_Data* data; // the symbols, as libelf translated them
    size_t index;   // the section's index (what a hash section's sh_link names)
    size_t count;   // symbols in `data`
};

struct GnuHash {
    size_t symbols; // the index of the symbol table it hashes (its sh_link)
    Elf_Data* data; // in memory order, as libelf translated it
};

// The file's symbol tables and GNU hash tables, in section order.
struct Tables {
    std::vector<SymbolTable> symbols;
    std::vector<GnuHash> hashes;
};

Tables tables_of(Elf* elf) {
    Tables tables;
    for (Elf_Scn* section = nullptr; (section = elf_nextscn(elf, section)) != nullptr;) {
        GElf_Shdr header;
        if (gelf_getshdr(section, &header) == nullptr) {
            continue;
        }
        if (header.sh_type == SHT_GNU_HASH) {
            tables.hashes.push_back({header.sh_link, elf_getdata(section, nullptr)});
        } else if ((header.sh_type == SHT_SYMTAB || header.sh_type == SHT_DYNSYM) &&
                   header.sh_entsize != 0) {
            Elf_Data* data = elf_getdata(section, nullptr);
            size_t count = data == nullptr ? 0 : header.sh_size / header.sh_entsize;
            tables.symbols.push_back({header, data, elf_ndxscn(section), count});
        }
    }
    return tables;
}

// Whether symbol `i` of `table` is defined and named `name`.
bool defines_at(Elf* elf, const SymbolTable& table, size_t i, std::string_view name) {
    GElf_Sym symbol;
    if (gelf_getsym(table.data, static_cast<int>(i), &symbol) == nullptr ||
        symbol.st_shndx == SHN_UNDEF) {
        return false;
    }
    const char* text = elf_strptr(elf, table.header.sh_link, symbol.st_name);
    return text != nullptr && std::strncmp(text, name.data(), name.size()) == 0 &&
           text[name.size()] == '\0';
}

bool scan(Elf* elf, const SymbolTable& table, size_t first, size_t last, std::string_view name) {
    for (size_t i = first; i < last && i < table.count; ++i) {
        if (defines_at(elf, table, i, name)) {
            return true;
        }
    }
    return false;
}

// The hash ld.so's GNU hash tables are keyed by (bfd's bfd_elf_gnu_hash).
uint32_t gnu_hash(std::string_view name) {
    uint32_t hash = 5381;
    for (unsigned char c : name) {
        hash = hash * 33 + c;
    }
    return hash;
}

uint32_t word_at(const Elf_Data* data, size_t offset) {
    uint32_t value;
    std::memcpy(&value, static_cast<const char*>(data->d_buf) + offset, sizeof value);
    return value;
}

// `name` looked up in `table` through the GNU hash table `hash` (in memory order, as
// libelf translates it): the header {nbuckets, symoffset, bloom_size, bloom_shift},
// bloom_size words of the file's class, nbuckets bucket words, then one chain word per
// symbol from symoffset, whose low bit ends its chain. nullopt when the table does not
// hold together (the caller then scans).
std::optional<bool> lookup(Elf* elf, const SymbolTable& table, const Elf_Data* hash,
                           size_t bloom_word_size, std::string_view name) {
    if (hash == nullptr || hash->d_buf == nullptr || hash->d_size < 16) {
        return std::nullopt;
    }
    size_t size = hash->d_size;
    uint32_t buckets = word_at(hash, 0);
    uint32_t symoffset = word_at(hash, 4);
    uint32_t bloom_size = word_at(hash, 8);
    if (buckets == 0 || symoffset > table.count || bloom_size > (size - 16) / bloom_word_size) {
        return std::nullopt;
    }
    size_t buckets_at = 16 + size_t{bloom_size} * bloom_word_size;
    if (buckets > (size - buckets_at) / 4) {
        return std::nullopt;
    }
    size_t chains_at = buckets_at + size_t{buckets} * 4;
    // The symbols below symoffset are not hashed: imports, mostly, skipped without their
    // names being read.
    if (scan(elf, table, 0, symoffset, name)) {
        return true;
    }
    uint32_t wanted = gnu_hash(name);
    size_t i = word_at(hash, buckets_at + size_t{wanted % buckets} * 4);
    if (i == 0) {
        return false; // an empty bucket
    }
    for (; i >= symoffset && i < table.count; ++i) {
        size_t chain_at = chains_at + (i - symoffset) * 4;
        if (chain_at > size - 4) {
            break;
        }
        uint32_t entry = word_at(hash, chain_at);
        if ((entry | 1) == (wanted | 1) && defines_at(elf, table, i, name)) {
            return true;
        }
        if ((entry & 1) != 0) {
            return false; // the chain's end
        }
    }
    return std::nullopt;
}

} // namespace

bool defines_symbol(Elf* elf, std::string_view name) {
    Tables tables = tables_of(elf);
    const unsigned char* ident = (const unsigned char*)elf_getident(elf, nullptr);
    size_t bloom_word_size = ident != nullptr && ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
    for (const SymbolTable& table : tables.symbols) {
        std::optional<bool> found;
        for (const GnuHash& hash : tables.hashes) {
            if (!found && table.header.sh_type == SHT_DYNSYM && hash.symbols == table.index) {
                found = lookup(elf, table, hash.data, bloom_word_size, name);
            }
        }
        if (found ? *found : scan(elf, table, 0, table.count, name)) {
            return true;
        }
    }
    return false;
}

} // namespace heapkit
