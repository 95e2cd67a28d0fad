// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/clone_names.hpp"

#include <array>

namespace heapkit {
namespace {

// The kinds of copy GCC names with a suffix; a number may follow each.
constexpr std::array clone_kinds = {
    std::string_view("part"),        std::string_view("constprop"), std::string_view("isra"),
    std::string_view("cold"),        std::string_view("lto_priv"),  std::string_view("localalias"),
    std::string_view("specialized"),
};

bool is_digits(std::string_view text) {
    return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_clone_kind(std::string_view word) {
    for (std::string_view kind : clone_kinds) {
        if (word == kind) {
            return true;
        }
    }
    return false;
}

// `name` less one trailing ".kind" or ".kind.N", or `name` itself when it has none.
std::string_view strip_one_c_suffix(std::string_view name) {
    size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0) {
        return name;
    }
    std::string_view last = name.substr(dot + 1);
    if (is_clone_kind(last)) {
        return name.substr(0, dot);
    }
    if (!is_digits(last)) {
        return name;
    }
    size_t kind_dot = name.rfind('.', dot - 1);
    if (kind_dot == std::string_view::npos || kind_dot == 0 ||
        !is_clone_kind(name.substr(kind_dot + 1, dot - kind_dot - 1))) {
        return name;
    }
    return name.substr(0, kind_dot);
}

// `name` less one trailing " [clone .…]", as the demangler prints a C++ clone.
std::string_view strip_one_cxx_suffix(std::string_view name) {
    constexpr std::string_view open = " [clone .";
    if (name.empty() || name.back() != ']') {
        return name;
    }
    size_t at = name.rfind(open);
    if (at == std::string_view::npos || at == 0 || name.find(']', at) != name.size() - 1) {
        return name;
    }
    return name.substr(0, at);
}

} // namespace

std::string_view without_clone_suffixes(std::string_view name) {
    for (;;) {
        std::string_view shorter = strip_one_cxx_suffix(strip_one_c_suffix(name));
        if (shorter == name) {
            return name;
        }
        name = shorter;
    }
}

} // namespace heapkit
