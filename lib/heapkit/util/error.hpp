// SPDX-License-Identifier: MIT
#pragma once

#include <fmt/format.h>
#include <string>
#include <tl/expected.hpp>
#include <utility>

namespace heapkit {

// A failure the user can act on. The message is complete: it already names
// the file (and line, where there is one) it is about.
struct Error {
    std::string message;
    int system_error = 0; // errno, where the system said why (ENOENT, EMFILE, ...); else 0
};

template <class T> using Result = tl::expected<T, Error>;

template <class... Args>
tl::unexpected<Error> fail(fmt::format_string<Args...> format, Args&&... args) {
    return tl::unexpected(Error{fmt::format(format, std::forward<Args>(args)...)});
}

// The same for a failure the system explained: `code` is its errno.
template <class... Args>
tl::unexpected<Error> fail_system(int code, fmt::format_string<Args...> format, Args&&... args) {
    return tl::unexpected(Error{fmt::format(format, std::forward<Args>(args)...), code});
}

} // namespace heapkit
