// SPDX-License-Identifier: MIT
#pragma once

#include <charconv>
#include <cstdint>
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

// Consumes an unsigned number in `base` at the front of `text`; nullopt (text
// untouched) when there is none or it does not fit in 64 bits.
inline std::optional<uint64_t> take_number(std::string_view& text, int base) {
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (ec != std::errc() || end == text.data()) {
        return std::nullopt;
    }
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    return value;
}

inline std::optional<uint64_t> take_decimal(std::string_view& text) {
    return take_number(text, 10);
}

// A hexadecimal number with an optional "0x" prefix.
inline std::optional<uint64_t> take_hex(std::string_view& text) {
    std::string_view rest = text;
    if (rest.size() > 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X')) {
        rest.remove_prefix(2);
    }
    auto value = take_number(rest, 16);
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

inline void skip_spaces(std::string_view& text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
}

} // namespace heapkit
