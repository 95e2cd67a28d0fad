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
};

template <class T> using Result = tl::expected<T, Error>;

template <class... Args>
tl::unexpected<Error> fail(fmt::format_string<Args...> format, Args&&... args) {
    return tl::unexpected(Error{fmt::format(format, std::forward<Args>(args)...)});
}

} // namespace heapkit
