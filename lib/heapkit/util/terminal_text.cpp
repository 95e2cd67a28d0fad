// SPDX-License-Identifier: MIT
#include "heapkit/util/terminal_text.hpp"

#include "heapkit/util/utf8.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace heapkit {
namespace {

bool is_control(unsigned char c) {
    return c < 0x20 || c == 0x7f;
}

// `keep`: the one or two control characters left as they are ("" for none).
std::string escape_controls(std::string_view text, std::string_view keep) {
    auto escaped = [keep](unsigned char byte) {
        return is_control(byte) && keep.find(static_cast<char>(byte)) == std::string_view::npos;
    };
    // The common case, a name of printable ASCII, costs one scan and a copy.
    if (std::none_of(text.begin(), text.end(), [&](char c) {
            auto byte = static_cast<unsigned char>(c);
            return escaped(byte) || byte >= 0x80;
        })) {
        return std::string(text);
    }
    std::string valid = valid_utf8(text);
    std::string out;
    out.reserve(valid.size() + 8);
    for (size_t i = 0; i < valid.size(); ++i) {
        auto byte = static_cast<unsigned char>(valid[i]);
        auto next = i + 1 < valid.size() ? static_cast<unsigned char>(valid[i + 1]) : 0;
        if (escaped(byte)) {
            out += fmt::format("\\x{:02x}", byte);
        } else if (byte == 0xc2 && next >= 0x80 && next <= 0x9f) { // U+0080-U+009F
            out += fmt::format("\\u{:04x}", next);
            ++i;
        } else {
            out += valid[i];
        }
    }
    return out;
}

} // namespace

std::string terminal_safe(std::string_view text) {
    return escape_controls(text, "");
}

std::string terminal_safe_lines(std::string_view text) {
    return escape_controls(text, "\n\t");
}

} // namespace heapkit
