// SPDX-License-Identifier: MIT
#include "heapkit/util/lazy_regexes.hpp"

#include <algorithm>

namespace heapkit {

void LazyRegexes::add(std::string_view pattern) {
    const Pattern& added = m_patterns.emplace_back(pattern);
    for (std::string& start : literal_starts(pattern)) {
        Start entry{std::move(start), &added};
        m_starts.insert(std::upper_bound(m_starts.begin(), m_starts.end(), entry), entry);
    }
}

bool LazyRegexes::full_match(std::string_view text) const {
    auto tried = [&](const Start& start) {
        return text.starts_with(start.text) && start.pattern->full_match(text);
    };
    // The empty starts (any text may match) sort first; then those that begin with the
    // text's first byte.
    for (auto it = m_starts.begin(); it != m_starts.end() && it->text.empty(); ++it) {
        if (tried(*it)) {
            return true;
        }
    }
    if (text.empty()) {
        return false;
    }
    auto first = std::lower_bound(m_starts.begin(), m_starts.end(), text.substr(0, 1),
                                  [](const Start& start, std::string_view key) {
                                      return std::string_view(start.text).substr(0, 1) < key;
                                  });
    for (auto it = first; it != m_starts.end() && it->text[0] == text[0]; ++it) {
        if (tried(*it)) {
            return true;
        }
    }
    return false;
}

bool LazyRegexes::Pattern::full_match(std::string_view text) const {
    std::call_once(m_once, [&] { m_regex.emplace(*Regex::compile("(?:" + m_pattern + ")")); });
    return m_regex->full_match(text);
}

} // namespace heapkit
