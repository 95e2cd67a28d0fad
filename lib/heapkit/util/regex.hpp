// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace heapkit {

// A compiled regular expression in RE2's syntax: pprof's (Go's regexp) for -focus,
// -ignore, -hide and a profile's drop_frames, so that a pattern means here what it means
// to pprof. RE2 matches in time linear in the text, without backtracking: the allocator
// regex (a few hundred alternatives) costs one pass over a name, where std::regex tried
// each alternative in turn. Copies share the compiled program (RE2 is thread-safe).
class Regex {
public:
    // An error naming `pattern` and what is wrong with it.
    static Result<Regex> compile(std::string_view pattern);

    bool search(std::string_view text) const;     // a match anywhere in `text`
    bool full_match(std::string_view text) const; // `text` matched as a whole

private:
    explicit Regex(std::shared_ptr<const re2::RE2> compiled)
        : m_compiled(std::move(compiled)) {}

    std::shared_ptr<const re2::RE2> m_compiled;
};

// `text` as a regex matching exactly it, in the syntax both RE2 and Go's regexp read: only
// the metacharacters are escaped (RE2::QuoteMeta's "\ " is an error to Go).
std::string regex_literal(std::string_view text);

// Texts one of which every whole match of `pattern` (RE2's syntax) begins with: its
// literal characters (escaped punctuation included) up to the first that is not, each
// optional literal group "(text)?" on the way both taken and left out. Lets a caller
// skip compiling and running a pattern for a text it cannot match. {""} (every text may
// match) where the pattern starts otherwise, or has an alternation outside parentheses.
std::vector<std::string> literal_starts(std::string_view pattern);

} // namespace heapkit
