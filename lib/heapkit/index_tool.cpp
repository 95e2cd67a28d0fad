// SPDX-License-Identifier: MIT
// run_index_tool (heapkit.hpp): how heapkit-index runs once its flags are read. The cache
// found and checked, the background's limits entered, each file's index made or kept and
// said on standard output, the cache pruned and described, and the exit status. What the
// user typed is read in cmd/.
#include "heapkit/heapkit.hpp"
#include "heapkit/symbolize/index/cache_usage.hpp"
#include "heapkit/symbolize/index/detached_indexer.hpp"
#include "heapkit/symbolize/index/index_files.hpp"
#include "heapkit/util/try.hpp"

#include <cstdint>
#include <cstdio>
#include <fmt/format.h>

namespace heapkit {
namespace {

std::string megabytes(uint64_t bytes) {
    return fmt::format("{:.1f} MB", static_cast<double>(bytes) / (1 << 20));
}

// Prunes (with `prune`) and then says (with `stats`) on stdout what `cache_directory`
// holds; an error when it cannot be listed. Warnings go to stderr.
Result<void> tend_cache(const std::string& cache_directory, uint64_t max_bytes, bool prune,
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

// The cache to use, checked; unlike heapfold, there is nothing to do without one.
Result<std::string> usable_cache(std::string directory) {
    if (directory.empty()) {
        directory = default_cache_directory();
    }
    if (directory.empty()) {
        return fail("no cache directory: give --cache-dir, or set HEAPKIT_CACHE_DIR or HOME");
    }
    HEAPKIT_TRY(check_cache_directory(directory));
    return directory;
}

// Each file's index made or kept, a line each on stdout (not with `quiet`); 1 when any
// file has none.
int index_each(const IndexToolOptions& options, const SymbolizeOptions& symbols) {
    std::vector<std::string> warnings;
    auto results = index_files(options.files, symbols, warnings,
                               options.background ? BuildLock::Wait::no : BuildLock::Wait::yes);
    for (const std::string& warning : warnings) {
        fmt::print(stderr, "heapkit-index: warning: {}\n", warning);
    }
    int status = 0;
    for (const IndexedFile& result : results) {
        if (!result.problem.empty()) {
            fmt::print(stderr, "heapkit-index: error: {}\n", result.problem);
            status = 1;
        } else if (!options.quiet) {
            fmt::print("{} {} {} {} {}\n", result.path, result.built ? "built" : "kept", result.key,
                       result.bytes, result.index);
        }
    }
    return status;
}

// The run, up to an error that ends it (said by run_index_tool); else the exit status.
Result<int> index_and_tend(const IndexToolOptions& options) {
    SymbolizeOptions symbols = options.symbols;
    HEAPKIT_TRY_ASSIGN(symbols.cache_directory, usable_cache(symbols.cache_directory));
    if (options.background) {
        HEAPKIT_TRY(enter_background(symbols.cache_directory));
    }
    HEAPKIT_TRY_ASSIGN(uint64_t max_bytes, cache_max_bytes());
    int status = index_each(options, symbols);
    if (options.prune || options.stats) {
        HEAPKIT_TRY(tend_cache(symbols.cache_directory, max_bytes, options.prune, options.stats));
    }
    return status;
}

} // namespace

int run_index_tool(const IndexToolOptions& options) {
    auto status = index_and_tend(options);
    if (!status) {
        fmt::print(stderr, "heapkit-index: error: {}\n", status.error().message);
        return 1;
    }
    return *status;
}

} // namespace heapkit
