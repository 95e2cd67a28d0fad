// SPDX-License-Identifier: MIT
// How much the cache holds and the bound its address indexes are kept within: what
// `heapkit-index --stats` says, and the pruning every run that adds an index does.
#pragma once

#include "heapkit/util/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace heapkit {

// The address indexes are kept within this many bytes unless $HEAPKIT_CACHE_MAX_MB says.
constexpr uint64_t default_cache_max_bytes = uint64_t{1} << 30;

// $HEAPKIT_CACHE_MAX_MB in bytes (a whole number of MB from 1 up), else the default; an
// error naming the variable when it is set to anything else.
Result<uint64_t> cache_max_bytes();

// What a cache directory holds, in bytes and files.
struct CacheUsage {
    std::string index_directory; // its address indexes of this version: <cache>/index-N
    uint64_t index_files = 0;
    uint64_t index_bytes = 0;
    uint64_t other_files = 0; // everything else under the cache: dpkg's answers, lock
    uint64_t other_bytes = 0; // files, other versions' indexes
};

// Walks `directory` (the cache directory); an error naming it when it cannot be listed.
// A missing directory holds nothing.
Result<CacheUsage> cache_usage(const std::string& directory);

// What a prune removed.
struct Pruned {
    uint64_t files = 0;
    uint64_t bytes = 0;
};

// Removes the least recently used indexes of `index_directory` (by modification time,
// which each use refreshes) until the rest take at most `max_bytes`. An index is removed
// only under its build lock (build_lock.hpp), taken without waiting: one being built, or
// being opened by a reader (BuildLock::hold_for_reading), is passed over; once mapped, a
// removed file stays readable to whoever maps it. A directory that cannot be listed gives
// a warning.
Pruned prune_indexes(const std::string& index_directory, uint64_t max_bytes,
                     std::vector<std::string>& warnings);

} // namespace heapkit
