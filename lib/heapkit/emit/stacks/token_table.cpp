// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/token_table.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <stdexcept>

namespace heapkit {

namespace {

// Ranks number two pieces a token in 32 bits (piece_ranks.hpp).
constexpr size_t most_tokens = size_t{1} << 31;

} // namespace

TokenTable::TokenTable(std::span<const Location> locations)
    : m_locations(locations)
    , m_added(locations.size()) {
    if (locations.size() >= most_tokens) {
        throw std::length_error("more than 2^31 locations");
    }
}

uint32_t TokenTable::intern(std::string text) {
    auto [it, inserted] = m_ids.try_emplace(std::move(text), static_cast<uint32_t>(size()));
    if (inserted) {
        if (size() >= most_tokens) {
            m_ids.erase(it);
            throw std::length_error("more than 2^31 frame texts");
        }
        m_texts.push_back(&it->first);
    }
    return it->second;
}

uint32_t TokenTable::intern_prefix(std::string text) {
    auto [it, inserted] = m_prefix_ids.try_emplace(text, static_cast<uint32_t>(m_prefixes.size()));
    if (inserted) {
        m_prefixes.push_back(std::move(text));
    }
    return it->second;
}

void TokenTable::spell_module(uint32_t module, uint32_t prefix, uint64_t bias) {
    if (slot_of(module) >= m_modules.size()) {
        m_modules.resize(slot_of(module) + 1);
    }
    m_modules[slot_of(module)] = {bias, prefix, true};
}

uint32_t TokenTable::add_address(uint32_t location) {
    m_added[location] = true;
    return location;
}

size_t TokenTable::length(uint32_t token) const {
    if (!is_address(token)) {
        return string_text(token).size();
    }
    return prefix_text(address_prefix(token)).size() + 2 + hex_digits(address_value(token));
}

char* TokenTable::write(uint32_t token, char* out) const {
    if (!is_address(token)) {
        const std::string& text = string_text(token);
        return std::copy(text.begin(), text.end(), out);
    }
    const std::string& prefix = prefix_text(address_prefix(token));
    out = std::copy(prefix.begin(), prefix.end(), out);
    *out++ = '0';
    *out++ = 'x';
    return std::to_chars(out, out + 16, address_value(token), 16).ptr; // lowercase, as length()
}

void TokenTable::append(uint32_t token, std::string& out) const {
    if (!is_address(token)) {
        out += string_text(token);
        return;
    }
    out += prefix_text(address_prefix(token));
    char digits[18] = {'0', 'x'};
    out.append(digits, std::to_chars(digits + 2, std::end(digits), address_value(token), 16).ptr);
}

std::string TokenTable::text(uint32_t token) const {
    std::string text(length(token), '\0');
    write(token, text.data());
    return text;
}

} // namespace heapkit
