// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/token_table.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace heapkit {

namespace {

void check_room(size_t count) {
    if (count >= 0x80000000u) {
        throw std::length_error("more than 2^31 frame texts");
    }
}

} // namespace

uint32_t TokenTable::intern(std::string text) {
    auto [it, inserted] = m_ids.try_emplace(std::move(text), static_cast<uint32_t>(size()));
    if (inserted) {
        check_room(size());
        m_slots.push_back(static_cast<uint32_t>(m_texts.size()));
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

uint32_t TokenTable::add_address(uint32_t prefix, uint64_t value) {
    check_room(size());
    m_slots.push_back(static_cast<uint32_t>(m_values.size()) | address_bit);
    m_values.push_back(value);
    m_prefix_of.push_back(prefix);
    return static_cast<uint32_t>(size() - 1);
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

std::string TokenTable::text(uint32_t token) const {
    std::string text(length(token), '\0');
    write(token, text.data());
    return text;
}

} // namespace heapkit
