// SPDX-License-Identifier: MIT
// Passing errors up without writing the same three lines at every call.
#pragma once

#include "heapkit/util/error.hpp"

#include <exception>
#include <new>

// Evaluates `expr`, a Result; on failure returns its error from the enclosing function
// (which returns some Result).
#define HEAPKIT_TRY(...)                                                                           \
    do {                                                                                           \
        if (auto heapkit_try_ = (__VA_ARGS__); !heapkit_try_) {                                    \
            return tl::unexpected(std::move(heapkit_try_).error());                                \
        }                                                                                          \
    } while (false)

// `HEAPKIT_TRY_ASSIGN(auto dump, read_dump(path));`: declares or assigns `lhs` from the
// value of `expr`, a Result, or returns its error from the enclosing function.
#define HEAPKIT_TRY_ASSIGN(lhs, ...)                                                               \
    HEAPKIT_TRY_ASSIGN_(HEAPKIT_TRY_CONCAT_(heapkit_try_, __LINE__), lhs, __VA_ARGS__)
#define HEAPKIT_TRY_ASSIGN_(result, lhs, ...)                                                      \
    auto result = (__VA_ARGS__);                                                                   \
    if (!result) {                                                                                 \
        return tl::unexpected(std::move(result).error());                                          \
    }                                                                                              \
    lhs = std::move(*result)
#define HEAPKIT_TRY_CONCAT_(a, b) HEAPKIT_TRY_CONCAT2_(a, b)
#define HEAPKIT_TRY_CONCAT2_(a, b) a##b

namespace heapkit {

// Runs `body` (returning some Result) and turns an exception it lets out into an Error:
// the library's public functions answer with errors, never exceptions (a container's
// length_error, an allocation's bad_alloc).
template <class Body> auto catching(Body&& body) -> decltype(body()) {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail("out of memory");
    } catch (const std::exception& error) {
        return fail("{}", error.what());
    }
}

} // namespace heapkit
