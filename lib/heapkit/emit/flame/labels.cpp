// SPDX-License-Identifier: MIT
#include "heapkit/emit/flame/labels.hpp"

#include <algorithm>
#include <cmath>

namespace heapkit {
namespace {

bool continuation(char c) {
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
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

namespace {

size_t characters_in(std::string_view text) {
    return static_cast<size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return !continuation(c); }));
}

// Where the address part of an unnamed frame's label begins ("+0x4ada4" of
// "libisc-9.18.49-1~deb12u3.so+0x4ada4", "!0x4ad80" of an unnamed function), or npos.
size_t address_part(std::string_view name) {
    size_t at = name.find_last_of("+!");
    if (at == std::string_view::npos || at == 0 || name.substr(at + 1, 2) != "0x" ||
        name.find_first_not_of("0123456789abcdef", at + 3) != std::string_view::npos) {
        return std::string_view::npos;
    }
    return at;
}

} // namespace

std::string fitted_label(std::string_view name, double room) {
    if (!(room >= 3)) {
        return "";
    }
    auto fits = static_cast<size_t>(std::floor(room));
    // A versioned library's frames differ only in their offsets: cut the middle of the
    // file name and keep the offset, so that they do not all read "libisc-9.18.49-1~..".
    if (size_t at = address_part(name);
        at != std::string_view::npos && characters_in(name) > fits) {
        std::string_view tail = name.substr(at);
        if (tail.size() + 3 <= fits) {
            std::string head =
                fitted_label(name.substr(0, at), static_cast<double>(fits - tail.size()));
            return head + std::string(tail);
        }
    }
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
