// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace heapkit {

// Distinct frame texts, each with an id (a token), and the texts of unnamed locations
// kept as numbers until they are written.
//
// Why addresses are not strings here: a dump whose every frame is its own address (JIT
// code, a stripped program) has tens of millions of unnamed locations; as interned
// strings they took a std::string and a hash-map node each (about 100 bytes), and
// ranking them compared strings (BENCHMARKS.md, issue 47). An address token is its
// prefix's id and its number (16 bytes), spelled `prefix` "0x" lowercase-hex only when a
// line is written; piece_ranks.hpp ranks it from the number. Address tokens are not
// interned: two of the same text are two tokens, which rank_pieces ranks alike.
class TokenTable {
public:
    // A text's token: the same text, the same token.
    uint32_t intern(std::string text);
    // The id of the text spelled before an address's "0x" ("libc.so.6+", or ""): the
    // same text, the same id.
    uint32_t intern_prefix(std::string text);
    // A new token spelling prefix_text(prefix) + "0x" + `value` in lowercase hex.
    uint32_t add_address(uint32_t prefix, uint64_t value);

    size_t size() const { return m_slots.size(); }
    bool is_address(uint32_t token) const { return (m_slots[token] & address_bit) != 0; }
    // A string token's text (not an address token's).
    const std::string& string_text(uint32_t token) const { return *m_texts[m_slots[token]]; }
    uint32_t address_prefix(uint32_t token) const { return m_prefix_of[slot(token)]; }
    uint64_t address_value(uint32_t token) const { return m_values[slot(token)]; }
    const std::string& prefix_text(uint32_t prefix) const { return m_prefixes[prefix]; }
    size_t prefix_count() const { return m_prefixes.size(); }

    // Any token's text: its length, written at `out` (returns the end), or as a string.
    size_t length(uint32_t token) const;
    char* write(uint32_t token, char* out) const;
    std::string text(uint32_t token) const;

private:
    static constexpr uint32_t address_bit = 0x80000000u;
    uint32_t slot(uint32_t token) const { return m_slots[token] & ~address_bit; }

    // Per token: index into m_texts, or (with address_bit) into m_values and m_prefix_of.
    std::vector<uint32_t> m_slots;
    std::unordered_map<std::string, uint32_t> m_ids; // text -> token
    std::vector<const std::string*> m_texts;         // keys of m_ids: map nodes do not move
    std::vector<uint64_t> m_values;
    std::vector<uint32_t> m_prefix_of;
    std::vector<std::string> m_prefixes;
    std::unordered_map<std::string, uint32_t> m_prefix_ids;
};

// Lowercase hex digits `value` is spelled with: 1 for 0.
inline unsigned hex_digits(uint64_t value) {
    return std::max(1u, (static_cast<unsigned>(std::bit_width(value)) + 3) / 4);
}

} // namespace heapkit
