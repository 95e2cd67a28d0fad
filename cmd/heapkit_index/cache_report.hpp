// SPDX-License-Identifier: MIT
// heapkit-index --prune and --stats: the cache kept within its bound now, and what it holds.
#pragma once

#include "heapkit/symbolize/index/cache_usage.hpp"
#include "heapkit/util/try.hpp"

#include <cstdio>
#include <fmt/format.h>
#include <string>
#include <vector>

namespace heapkit::cmd {

inline std::string megabytes(uint64_t bytes) {
    return fmt::format("{:.1f} MB", static_cast<double>(bytes) / (1 << 20));
}

// Prunes (with `prune`) and then says (with `stats`) on stdout what `cache_directory`
// holds; an error when it cannot be listed. Warnings go to stderr.
inline Result<void> tend_cache(const std::string& cache_directory, uint64_t max_bytes, bool prune,
                               bool stats) {
    HEAPKIT_TRY_ASSIGN(CacheUsage usage, cache_usage(cache_directory));
    if (prune) {
        std::vector<std::string> warnings;
        Pruned pruned = prune_indexes(usage.index_directory, max_bytes, warnings);
        for (const std::string& warning : warnings) {
            fmt::print(stderr, "heapkit-index: warning: {}\n", warning);
        }
        fmt::print("pruned: {} index{}, {}\n", pruned.files, pruned.files == 1 ? "" : "es",
                   megabytes(pruned.bytes));
        HEAPKIT_TRY_ASSIGN(usage, cache_usage(cache_directory));
    }
    if (stats) {
        fmt::print("cache: {}\n"
                   "address indexes: {} in {}, {} of the {} they are kept within "
                   "($HEAPKIT_CACHE_MAX_MB; the least recently used are removed beyond it)\n"
                   "other files: {}, {} (dpkg's answers, lock files, other versions' "
                   "indexes)\n",
                   cache_directory, usage.index_files, usage.index_directory,
                   megabytes(usage.index_bytes), megabytes(max_bytes), usage.other_files,
                   megabytes(usage.other_bytes));
    }
    return {};
}

} // namespace heapkit::cmd
