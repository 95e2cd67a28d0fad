// SPDX-License-Identifier: MIT
#include "heapkit/util/xml.hpp"

#include "heapkit/util/utf8.hpp"

#include <algorithm>

namespace heapkit {
namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD"; // U+FFFD

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

} // namespace

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

} // namespace heapkit
