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
