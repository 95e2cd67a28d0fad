// SPDX-License-Identifier: MIT
#include "heapkit/emit/flame_text.hpp"

#include "heapkit/util/utf8.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace heapkit {
namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD"; // U+FFFD

bool continuation(char c) {
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// XML 1.0 allows tab, newline and carriage return among the controls, but a parser turns
// the last two into spaces or newlines: a name keeps only tab.
bool forbidden(std::string_view text, size_t i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20) {
        return c != '\t';
    }
    // U+FFFE and U+FFFF are UTF-8 EF BF BE and EF BF BF.
    return c == 0xEF && i + 2 < text.size() && text[i + 1] == '\xBF' &&
           (text[i + 2] == '\xBE' || text[i + 2] == '\xBF');
}

// flamegraph.pl divides 100 * part, an integer, by the total: so do we, in the same
// order, so that the rounding to two decimals agrees (Perl too turns to floating point
// when 100 * part overflows).
template <class Integer> std::string percent(Integer part, uint64_t total) {
    Integer hundredfold = 0;
    double exact = __builtin_mul_overflow(part, 100, &hundredfold)
                       ? static_cast<double>(part) * 100
                       : static_cast<double>(hundredfold);
    return fmt::format("{:.2f}", total == 0 ? 0.0 : exact / static_cast<double>(total));
}

} // namespace

std::string_view display_name(std::string_view name) {
    for (std::string_view mark : {"_[k]", "_[i]", "_[j]", "_[w]"}) {
        if (name.size() >= mark.size() && name.substr(name.size() - mark.size()) == mark) {
            return name.substr(0, name.size() - mark.size());
        }
    }
    return name;
}

std::string escape_xml(std::string_view text) {
    std::string valid;
    if (std::any_of(text.begin(), text.end(), [](char c) { return c & 0x80; })) {
        valid = valid_utf8(text);
        text = valid;
    }
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        switch (text[i]) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            if (forbidden(text, i)) {
                out += replacement;
                i += static_cast<unsigned char>(text[i]) == 0xEF ? 2 : 0;
            } else {
                out += text[i];
            }
        }
    }
    return out;
}

std::string with_thousands(uint64_t value) {
    std::string digits = fmt::format("{}", value);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) {
            out += ',';
        }
        out += digits[i];
    }
    return out;
}

std::string percent_of(uint64_t part, uint64_t total) {
    return percent(part, total);
}

std::string percent_of(int64_t part, uint64_t total) {
    return percent(part, total);
}

std::string fitted_label(std::string_view name, double room) {
    if (!(room >= 3)) {
        return "";
    }
    auto fits = static_cast<size_t>(std::floor(room));
    size_t characters = 0;
    size_t cut = 0; // the byte where the first fits - 2 characters end
    for (size_t i = 0; i < name.size(); ++i) {
        if (continuation(name[i])) {
            continue;
        }
        if (characters == fits - 2) {
            cut = i;
        }
        if (++characters > fits) {
            return std::string(name.substr(0, cut)) + "..";
        }
    }
    return std::string(name);
}

} // namespace heapkit
