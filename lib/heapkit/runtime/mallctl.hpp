// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"

#include <cstddef>
#include <string>

namespace heapkit::runtime {

// jemalloc's control interface in this process, found at run time: linked jemalloc or
// LD_PRELOAD (`mallctl`), or a prefixed build (`je_mallctl`, tikv-jemallocator's
// `_rjem_mallctl`). Nothing of jemalloc is needed at link time.
class Mallctl {
public:
    // The mallctl of this process; an error says that jemalloc is not loaded.
    static Result<Mallctl> find();

    template <class T> Result<T> read(const char* name) const {
        T value{};
        size_t size = sizeof(value);
        if (auto ok = call(name, &value, &size, nullptr, 0); !ok) {
            return tl::unexpected(ok.error());
        }
        return value;
    }

    template <class T> Result<void> write(const char* name, T value) const {
        return call(name, nullptr, nullptr, &value, sizeof(value));
    }

    // A mallctl that takes and returns nothing ("prof.dump" with no file, "epoch"...).
    Result<void> run(const char* name) const { return call(name, nullptr, nullptr, nullptr, 0); }

    const std::string& symbol() const { return m_symbol; }

private:
    using Function = int (*)(const char*, void*, size_t*, void*, size_t);
    Mallctl(Function function, std::string symbol)
        : m_function(function)
        , m_symbol(std::move(symbol)) {}
    Result<void> call(const char* name, void* old_value, size_t* old_size, void* new_value,
                      size_t new_size) const;

    Function m_function;
    std::string m_symbol;
};

} // namespace heapkit::runtime
