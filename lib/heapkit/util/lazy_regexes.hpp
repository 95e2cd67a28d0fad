// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/regex.hpp"

#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// Regexes (RE2's syntax) a text is matched against whole, any of them: each compiled on
// its first use, and tried only for a text that begins as its matches must
// (literal_starts), found by the text's first byte. For many patterns of which a run
// needs few: compiling them all at once costs more than the matching. Thread-safe once
// filled: threads may match at once (each pattern is compiled once).
class LazyRegexes {
public:
    // `pattern` must compile (it is compiled only when first needed).
    void add(std::string_view pattern);

    // True when one of the patterns matches `text` as a whole.
    bool full_match(std::string_view text) const;

private:
    class Pattern {
    public:
        explicit Pattern(std::string_view pattern)
            : m_pattern(pattern) {}
        bool full_match(std::string_view text) const;

    private:
        std::string m_pattern;
        mutable std::once_flag m_once;
        mutable std::optional<Regex> m_regex;
    };
    struct Start {
        std::string text; // a whole match of `pattern` begins with it
        const Pattern* pattern;
        bool operator<(const Start& other) const { return text < other.text; }
    };
    std::deque<Pattern> m_patterns; // not movable: a deque
    std::vector<Start> m_starts;    // by text
};

} // namespace heapkit
