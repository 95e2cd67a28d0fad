// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace heapkit {

// Walks a text buffer line by line, counting lines from 1 and dropping the
// line terminator ("\n" or "\r\n"). Never copies.
class LineCursor {
public:
    explicit LineCursor(std::string_view text, size_t first_line = 1)
        : m_rest(text)
        , m_next_number(first_line) {}

    // The next line, or nullopt at the end of the text.
    std::optional<std::string_view> next() {
        if (m_rest.empty()) {
            return std::nullopt;
        }
        size_t end = m_rest.find('\n');
        std::string_view line = m_rest.substr(0, end);
        m_rest.remove_prefix(end == std::string_view::npos ? m_rest.size() : end + 1);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        m_number = m_next_number++;
        return line;
    }

    // Looks at the next line without consuming it.
    std::optional<std::string_view> peek() const {
        LineCursor copy = *this;
        return copy.next();
    }

    // Number of the line last returned by next().
    size_t line_number() const { return m_number; }
    std::string_view rest() const { return m_rest; }

private:
    std::string_view m_rest;
    size_t m_next_number;
    size_t m_number = 0;
};

namespace detail {

// Hand loops for the two bases dumps use: std::from_chars is general over bases and
// showed as a third of the parse time. Same contract: digits only, no sign, and a
// value past 64 bits is no number at all.
inline std::optional<uint64_t> take_decimal_digits(std::string_view& text) {
    const char* p = text.data();
    const char* end = p + text.size();
    // Nineteen digits always fit: no overflow check in the common loop.
    const char* fits = text.size() > 19 ? p + 19 : end;
    uint64_t value = 0;
    unsigned digit = 0;
    for (; p != fits && (digit = static_cast<unsigned char>(*p - '0')) < 10; ++p) {
        value = value * 10 + digit;
    }
    for (; p != end && (digit = static_cast<unsigned char>(*p - '0')) < 10; ++p) {
        if (__builtin_mul_overflow(value, 10u, &value) ||
            __builtin_add_overflow(value, digit, &value)) {
            return std::nullopt;
        }
    }
    if (p == text.data()) {
        return std::nullopt;
    }
    text.remove_prefix(static_cast<size_t>(p - text.data()));
    return value;
}

// 0-15 for a hexadecimal digit (either case), 16 for anything else. A table, not
// comparisons: digits and letters alternate at random in addresses, and a branch on
// which one a character is mispredicts.
inline constexpr auto hex_digit_values = [] {
    std::array<uint8_t, 256> values{};
    values.fill(16);
    for (int c = 0; c < 10; ++c) {
        values['0' + c] = static_cast<uint8_t>(c);
    }
    for (int c = 0; c < 6; ++c) {
        values['a' + c] = values['A' + c] = static_cast<uint8_t>(10 + c);
    }
    return values;
}();

inline unsigned hex_digit_value(char c) {
    return hex_digit_values[static_cast<unsigned char>(c)];
}

// Eight bytes at a time (SWAR): the hex digits at the front of the little-endian word
// `w` (first character in the low byte), as their count and their value.
struct HexChunk {
    unsigned digits; // 0-8
    uint64_t value;
};

inline HexChunk hex_chunk(uint64_t w) {
    constexpr uint64_t ones = 0x0101010101010101;
    constexpr uint64_t high = ones * 0x80;
    // Bit 7 set in each byte of `w7` (all below 0x80: no carries) that lies in [lo, hi].
    auto between = [](uint64_t w7, unsigned lo, unsigned hi) {
        return (w7 + ones * (0x80 - lo)) & ~(w7 + ones * (0x7f - hi)) & high;
    };
    uint64_t w7 = w & ~high;
    uint64_t hex = (between(w7, '0', '9') | between(w7 | ones * 0x20, 'a', 'f')) & ~w;
    uint64_t other = ~hex & high;
    unsigned digits = other == 0 ? 8 : static_cast<unsigned>(__builtin_ctzll(other)) / 8;
    if (digits == 0) {
        return {0, 0};
    }
    // '0'-'9' are 0x30-0x39, letters 0x41-0x46 or 0x61-0x66 (bit 6 set): low nibble, +9
    // for letters. Then drop the bytes after the digits, leading zeros in their place.
    uint64_t nibbles = (w & ones * 0x0f) + ((w >> 6) & ones) * 9;
    nibbles <<= (8 - digits) * 8;
    // Pairs of bytes, then of 16-bit and of 32-bit lanes, first (more significant) digit
    // in the lower address.
    uint64_t v = ((nibbles << 4) | (nibbles >> 8)) & 0x00ff00ff00ff00ff;
    v = ((v << 8) | (v >> 16)) & 0x0000ffff0000ffff;
    v = ((v << 16) | (v >> 32)) & 0xffffffff;
    return {digits, v};
}

} // namespace detail

// The hex digits at [p, end): their value and the position after them; nullptr when
// there is no digit or the value does not fit in 64 bits.
inline const char* parse_hex_digits(const char* p, const char* end, uint64_t& value) {
    const char* start = p;
    uint64_t sum = 0;
    while (end - p >= 8) {
        uint64_t w = 0;
        std::memcpy(&w, p, 8);
        if constexpr (std::endian::native == std::endian::big) {
            w = __builtin_bswap64(w);
        }
        detail::HexChunk chunk = detail::hex_chunk(w);
        if (chunk.digits == 0) {
            break;
        }
        if (p - start + chunk.digits > 16) {
            sum = 0; // leading zeros, or too big: the careful loop below decides
            p = start;
            break;
        }
        sum = sum << (4 * chunk.digits) | chunk.value;
        p += chunk.digits;
        if (chunk.digits < 8) {
            value = sum;
            return p;
        }
    }
    // The last bytes of the text, and numbers with more than sixteen digits.
    for (unsigned digit = 0; p != end && (digit = detail::hex_digit_value(*p)) < 16; ++p) {
        if (sum >> 60 != 0) {
            return nullptr;
        }
        sum = sum << 4 | digit;
    }
    if (p == start) {
        return nullptr;
    }
    value = sum;
    return p;
}

// Hex digits without any prefix.
inline std::optional<uint64_t> take_hex_digits(std::string_view& text) {
    uint64_t value = 0;
    const char* after = parse_hex_digits(text.data(), text.data() + text.size(), value);
    if (after == nullptr) {
        return std::nullopt;
    }
    text.remove_prefix(static_cast<size_t>(after - text.data()));
    return value;
}

// Consumes an unsigned number in `base` at the front of `text`; nullopt (text
// untouched) when there is none or it does not fit in 64 bits.
inline std::optional<uint64_t> take_number(std::string_view& text, int base) {
    if (base == 10) {
        return detail::take_decimal_digits(text);
    }
    if (base == 16) {
        return take_hex_digits(text);
    }
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (ec != std::errc() || end == text.data()) {
        return std::nullopt;
    }
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    return value;
}

inline std::optional<uint64_t> take_decimal(std::string_view& text) {
    return detail::take_decimal_digits(text);
}

// A hexadecimal number with an optional "0x" prefix.
inline std::optional<uint64_t> take_hex(std::string_view& text) {
    std::string_view rest = text;
    if (rest.size() > 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X')) {
        rest.remove_prefix(2);
    }
    auto value = take_hex_digits(rest);
    if (value) {
        text = rest;
    }
    return value;
}

// Consumes `literal` at the front of `text`; false (text untouched) when absent.
inline bool take_literal(std::string_view& text, std::string_view literal) {
    if (text.substr(0, literal.size()) != literal) {
        return false;
    }
    text.remove_prefix(literal.size());
    return true;
}

// Consumes the character `c` at the front of `text`; false (text untouched) when absent.
inline bool take_char(std::string_view& text, char c) {
    if (text.empty() || text.front() != c) {
        return false;
    }
    text.remove_prefix(1);
    return true;
}

inline void skip_spaces(std::string_view& text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
}

} // namespace heapkit
