// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/runtime/jemalloc_copies.hpp"
#include "heapkit/util/error.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit::runtime {

// The copies of jemalloc in this process (jemalloc_copies.hpp), found once, on first use:
// dynamic, static in the executable, or prefixed (tikv-jemallocator's `_rjem_`). Nothing
// of jemalloc is needed at link time.
const JemallocCopies& jemalloc_copies();

// One copy's control interface (mallctl).
class Mallctl {
public:
    // `copy` must live as long as the process (one of jemalloc_copies()).
    explicit Mallctl(const JemallocCopy& copy)
        : m_copy(&copy) {}
    // The copy that holds the program's heap (JemallocCopies::serving); an error says why
    // there is none, and what to do.
    static Result<Mallctl> find();
    // The copy a page was asked for by name (`?jemalloc=`: its prefix, or its object's file
    // name); empty: the serving copy. An unused copy is refused with why.
    static Result<Mallctl> find(std::string_view which);
    // The copy this process's own malloc is (where the runtime's allocations go), if it is
    // jemalloc's: the one the guest rules (no sampling, arena 0) are set in.
    static std::optional<Mallctl> own_allocations();

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

    const JemallocCopy& copy() const { return *m_copy; }
    // "mallctl", "_rjem_mallctl": how messages name it.
    std::string symbol() const;
    // The environment variable this copy reads its options from ("MALLOC_CONF",
    // "_RJEM_MALLOC_CONF").
    std::string conf_variable() const;
    // One line for a person: where this copy is, and how it is configured.
    std::string description() const;

private:
    Result<void> call(const char* name, void* old_value, size_t* old_size, void* new_value,
                      size_t new_size) const;

    const JemallocCopy* m_copy; // in jemalloc_copies(), which lives as long as the process
};

// One line each for the copies besides the served one (where they are, and whether they
// hold allocations that its profile does not show); empty with one copy.
std::vector<std::string> other_copies_notes();

} // namespace heapkit::runtime
