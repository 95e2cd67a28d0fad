// SPDX-License-Identifier: MIT
#include "heapkit/util/regex.hpp"

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

} // namespace heapkit
