// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/standard_frames.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace heapkit {
namespace {

// Namespaces of both languages' standard libraries ("std::" is both), and the crates only
// Rust names start with: a C++ program may have a namespace "core".
constexpr std::array standard_prefixes = {std::string_view("std::"),
                                          std::string_view("__gnu_cxx::")};
constexpr std::array rust_prefixes = {std::string_view("core::"), std::string_view("alloc::"),
                                      std::string_view("hashbrown::")};

bool starts_standard(std::string_view path, bool rust) {
    for (std::string_view prefix : standard_prefixes) {
        if (path.starts_with(prefix)) {
            return true;
        }
    }
    for (std::string_view prefix : rust_prefixes) {
        if (rust && path.starts_with(prefix)) {
            return true;
        }
    }
    return false;
}

// C++'s demangled names: "RET NAME<T>(ARGS) const" for a function template's
// instantiation, "NAME(ARGS)" otherwise. The return type may hold parentheses and spaces
// ("decltype (::new ((void*)(0)) std::pair<…>(…)) std::construct_at<…>(…)"), and the
// operators' names brackets ("std::operator<< <std::char_traits<char> >(…)").

// `name` without its trailing qualifiers, clone suffix and argument list.
std::string_view without_arguments(std::string_view name) {
    for (bool trimmed = true; trimmed;) {
        trimmed = false;
        if (size_t clone = name.rfind(" [clone "); clone != std::string_view::npos) {
            name = name.substr(0, clone);
            trimmed = true;
        }
        for (std::string_view tail : {" const", " volatile", " &&", " &", " noexcept"}) {
            if (name.ends_with(tail)) {
                name.remove_suffix(tail.size());
                trimmed = true;
            }
        }
    }
    if (!name.ends_with(')')) {
        return name;
    }
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
        depth += name[i] == ')' ? 1 : name[i] == '(' ? -1 : 0;
        if (depth == 0) {
            return name.substr(0, i);
        }
    }
    return name;
}

// How many characters of `text` an operator's name takes ("operator<<", "operator new",
// "operator()"), or 0 when `text` does not start with one.
size_t operator_length(std::string_view text) {
    constexpr std::string_view word = "operator";
    if (!text.starts_with(word) || (text.size() > word.size() &&
                                    (std::isalnum(static_cast<unsigned char>(text[word.size()])) ||
                                     text[word.size()] == '_'))) {
        return 0;
    }
    // The longest operator token: "operator+<char>" is operator+ and its template's
    // arguments.
    constexpr std::array tokens = {
        "<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++",
        "--",  "+=",  "-=",  "*=",  "/=", "%=", "^=", "&=", "|=", "->", "()", "[]", "+",
        "-",   "*",   "/",   "%",   "^",  "&",  "|",  "~",  "!",  "=",  "<",  ">",  ","};
    size_t at = word.size();
    for (std::string_view token : tokens) {
        if (text.substr(at).starts_with(token)) {
            at += token.size();
            break;
        }
    }
    if (at == word.size() && at + 1 < text.size() && text[at] == ' ' &&
        std::isalpha(static_cast<unsigned char>(text[at + 1]))) {
        ++at; // "operator new", "operator delete[]", a conversion's "operator bool"
        while (at < text.size() && (std::isalnum(static_cast<unsigned char>(text[at])) ||
                                    text[at] == '_' || text[at] == '[' || text[at] == ']')) {
            ++at;
        }
    }
    return at;
}

// The qualified name after a C++ return type: after the last space outside brackets,
// operators' names skipped.
std::string_view without_return_type(std::string_view name) {
    int depth = 0;
    size_t after_space = 0;
    for (size_t i = 0; i < name.size(); ++i) {
        if (size_t length = operator_length(name.substr(i));
            length > 0 && (i == 0 || name[i - 1] == ':' || name[i - 1] == ' ')) {
            i += length - 1;
            continue;
        }
        char c = name[i];
        depth += (c == '<' || c == '(' || c == '[') ? 1 : 0;
        depth -= (c == '>' || c == ')' || c == ']') && depth > 0 ? 1 : 0;
        // Not the space before an operator's template arguments ("operator<< <…>"), nor
        // a qualifier's ("char const* f<…>", "f(int) const::{lambda()#1}").
        std::string_view next = name.substr(i + 1);
        if (c == ' ' && depth == 0 && !next.starts_with('<') && !next.starts_with("const") &&
            !next.starts_with("volatile")) {
            after_space = i + 1;
        }
    }
    return name.substr(after_space);
}

// Whether every path in a Rust type ("(u64, alloc::string::String)", "[T]") is the
// standard library's: a type of the program's makes an impl the program's.
bool only_standard_paths(std::string_view type) {
    auto path_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
    };
    for (size_t i = 0; i < type.size();) {
        size_t end = i;
        while (end < type.size() && path_char(type[end])) {
            ++end;
        }
        std::string_view word = type.substr(i, end - i);
        if (word.find("::") != std::string_view::npos && !starts_standard(word, true)) {
            return false;
        }
        i = std::max(end, i + 1);
    }
    return true;
}

// Rust's "<Self as Trait>::method" and "<Self>::method": the function is the standard
// library's when its Self type is, or when Self names no crate of the program's (a
// primitive, a slice, a generic T) and the trait is the standard library's, or there is
// no trait (only the standard library has inherent impls on primitives).
bool rust_impl_is_standard(std::string_view name) {
    int depth = 0;
    size_t as = std::string_view::npos;
    size_t close = std::string_view::npos;
    for (size_t i = 0; i < name.size() && close == std::string_view::npos; ++i) {
        depth += name[i] == '<' ? 1 : 0;
        depth -= name[i] == '>' ? 1 : 0;
        if (depth == 1 && as == std::string_view::npos && name.substr(i).starts_with(" as ")) {
            as = i;
        }
        close = depth == 0 ? i : close;
    }
    std::string_view self = name.substr(1, std::min(as, close) - 1);
    while (!self.empty() && (self.front() == '&' || self.front() == '[' || self.front() == '*')) {
        self.remove_prefix(1);
    }
    for (std::string_view word : {"mut ", "const ", "dyn "}) {
        if (self.starts_with(word)) {
            self.remove_prefix(word.size());
        }
    }
    if (starts_standard(self, true)) {
        return true;
    }
    if (!only_standard_paths(self) || close == std::string_view::npos) {
        return false;
    }
    if (as == std::string_view::npos) {
        return true;
    }
    // A trait declared inside an impl ("<u8 as <[_]>::to_vec_in::ConvertVec>") is that impl's.
    std::string_view trait = name.substr(as + 4);
    return trait.starts_with('<') ? rust_impl_is_standard(trait) : starts_standard(trait, true);
}

} // namespace

bool is_standard_library_function(std::string_view name) {
    if (name.starts_with('<')) {
        return rust_impl_is_standard(name);
    }
    // Rust's names carry no argument list; C++'s demangled names do.
    std::string_view function = without_arguments(name);
    bool rust = function.size() == name.size();
    return starts_standard(without_return_type(function), rust);
}

} // namespace heapkit
