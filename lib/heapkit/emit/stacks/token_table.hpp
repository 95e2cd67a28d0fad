// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace heapkit {

// Distinct frame texts, each with an id (a token), and the texts of unnamed locations
// read from the locations themselves, spelled only when written.
//
// Why addresses are not strings here: a dump whose every frame is its own address (JIT
// code, a stripped program) has tens of millions of unnamed locations; as interned
// strings they took a std::string and a hash-map node each (about 100 bytes), and
// ranking them compared strings (BENCHMARKS.md, issue 47). Nor are they copied: location
// l's token is l, its text its module's prefix ("libc.so.6+", or "" for no module), "0x"
// and its address less the module's bias in lowercase hex, read from the location when a
// line is written; piece_ranks.hpp ranks it from the number. Address tokens are not
// interned: two locations of the same text are two tokens, which rank_pieces ranks alike.
// String tokens are numbered after the locations.
class TokenTable {
public:
    TokenTable() = default;
    // Address tokens name `locations`, which outlive the table.
    explicit TokenTable(std::span<const Location> locations);

    // A text's token: the same text, the same token.
    uint32_t intern(std::string text);
    // The id of the text spelled before an address's "0x" ("libc.so.6+", or ""): the
    // same text, the same id.
    uint32_t intern_prefix(std::string text);
    // Addresses of `module` (an index into Profile::modules, or no_module) are spelled
    // prefix_text(prefix) "0x" and (address - bias) in lowercase hex (`bias`: the
    // runtime address of file offset 0, or 0 to spell the address itself).
    void spell_module(uint32_t module, uint32_t prefix, uint64_t bias);
    bool spells_module(uint32_t module) const {
        return slot_of(module) < m_modules.size() && m_modules[slot_of(module)].spelled;
    }
    // Location l's token (l), spelling its address; its module spelled before.
    uint32_t add_address(uint32_t location);

    size_t size() const { return m_locations.size() + m_texts.size(); }
    // String tokens are [first_string(), size()); address tokens are below.
    uint32_t first_string() const { return static_cast<uint32_t>(m_locations.size()); }
    bool is_address(uint32_t token) const { return token < m_locations.size(); }
    // Whether an address token was added: the others are never shown, nor ranked.
    bool has_address(uint32_t token) const { return m_added[token]; }
    // A string token's text (not an address token's).
    const std::string& string_text(uint32_t token) const {
        return *m_texts[token - m_locations.size()];
    }
    uint32_t address_prefix(uint32_t token) const { return spelling(token).prefix; }
    uint64_t address_value(uint32_t token) const {
        return m_locations[token].address - spelling(token).bias;
    }
    const std::string& prefix_text(uint32_t prefix) const { return m_prefixes[prefix]; }
    size_t prefix_count() const { return m_prefixes.size(); }

    // Any token's text: its length, written at `out` (returns the end), or as a string.
    size_t length(uint32_t token) const;
    char* write(uint32_t token, char* out) const;
    void append(uint32_t token, std::string& out) const;
    std::string text(uint32_t token) const;

private:
    struct ModuleSpelling {
        uint64_t bias = 0;
        uint32_t prefix = 0;
        bool spelled = false;
    };

    // m_modules holds no_module first and module m at m + 1 (no_module + 1 wraps to 0).
    static uint32_t slot_of(uint32_t module) { return module + 1; }
    const ModuleSpelling& spelling(uint32_t token) const {
        return m_modules[slot_of(m_locations[token].module)];
    }

    std::span<const Location> m_locations;
    std::vector<bool> m_added; // per location
    std::vector<ModuleSpelling> m_modules;
    std::unordered_map<std::string, uint32_t> m_ids; // text -> token
    std::vector<const std::string*> m_texts;         // keys of m_ids: map nodes do not move
    std::vector<std::string> m_prefixes;
    std::unordered_map<std::string, uint32_t> m_prefix_ids;
};

// Lowercase hex digits `value` is spelled with: 1 for 0.
inline unsigned hex_digits(uint64_t value) {
    return std::max(1u, (static_cast<unsigned>(std::bit_width(value)) + 3) / 4);
}

} // namespace heapkit
