// SPDX-License-Identifier: MIT
#include "heapkit/util/regex.hpp"

#include <cctype>
#include <optional>
#include <re2/re2.h>

namespace heapkit {

Result<Regex> Regex::compile(std::string_view pattern) {
    RE2::Options options;
    options.set_log_errors(false); // the error goes to the caller, not to standard error
    auto compiled =
        std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
    if (!compiled->ok()) {
        return fail("invalid regular expression \"{}\": {}", pattern, compiled->error());
    }
    return Regex(std::move(compiled));
}

bool Regex::search(std::string_view text) const {
    return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *m_compiled);
}

bool Regex::full_match(std::string_view text) const {
    return RE2::FullMatch(re2::StringPiece(text.data(), text.size()), *m_compiled);
}

std::string regex_literal(std::string_view text) {
    std::string regex;
    for (char c : text) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) {
            regex += '\\';
        }
        regex += c;
    }
    return regex;
}

namespace {

constexpr std::string_view metacharacters = "\\^$.|?*+()[]{}";

// True when `pattern` has a '|' outside parentheses (and brackets).
bool alternates_at_top(std::string_view pattern) {
    int depth = 0;
    bool in_class = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        char c = pattern[i];
        if (c == '\\') {
            ++i;
        } else if (in_class) {
            in_class = c != ']';
        } else if (c == '[') {
            in_class = true;
        } else if (c == '(') {
            ++depth;
        } else if (c == ')') {
            --depth;
        } else if (c == '|' && depth <= 0) {
            return true;
        }
    }
    return false;
}

// The literal character at `pattern[i]` and how many bytes spell it; nullopt for
// anything else (a metacharacter, a class like \d).
std::optional<std::pair<char, size_t>> literal_at(std::string_view pattern, size_t i) {
    char c = pattern[i];
    if (c == '\\') {
        bool punctuation =
            i + 1 < pattern.size() && std::ispunct(static_cast<unsigned char>(pattern[i + 1])) != 0;
        return punctuation ? std::optional(std::pair(pattern[i + 1], size_t{2})) : std::nullopt;
    }
    if (metacharacters.find(c) != std::string_view::npos) {
        return std::nullopt;
    }
    return std::pair(c, size_t{1});
}

// `group` as the literal text it matches, when it is nothing but literal characters.
std::optional<std::string> literal_text(std::string_view group) {
    std::string text;
    for (size_t i = 0; i < group.size();) {
        auto literal = literal_at(group, i);
        if (!literal) {
            return std::nullopt;
        }
        text += literal->first;
        i += literal->second;
    }
    return text;
}

bool is_quantifier(std::string_view pattern, size_t i) {
    return i < pattern.size() &&
           std::string_view("*+?{").find(pattern[i]) != std::string_view::npos;
}

} // namespace

std::vector<std::string> literal_starts(std::string_view pattern) {
    std::vector<std::string> starts{""};
    if (alternates_at_top(pattern)) {
        return starts;
    }
    for (size_t i = 0; i < pattern.size();) {
        if (pattern[i] == '(') { // "(text)?": with and without the text
            size_t close = pattern.find(')', i);
            std::optional<std::string> group;
            if (close != std::string_view::npos && close + 1 < pattern.size() &&
                pattern[close + 1] == '?') {
                group = literal_text(pattern.substr(i + 1, close - i - 1));
            }
            if (!group || group->empty()) {
                break;
            }
            for (size_t s = 0, count = starts.size(); s < count; ++s) {
                starts.push_back(starts[s] + *group);
            }
            i = close + 2;
            continue;
        }
        auto literal = literal_at(pattern, i);
        // A quantified character may be missing or repeated: the starts end before it.
        if (!literal || is_quantifier(pattern, i + literal->second)) {
            break;
        }
        for (std::string& start : starts) {
            start += literal->first;
        }
        i += literal->second;
    }
    return starts;
}

} // namespace heapkit
