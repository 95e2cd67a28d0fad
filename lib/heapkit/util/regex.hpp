// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"

#include <memory>
#include <string>
#include <string_view>

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

} // namespace heapkit
