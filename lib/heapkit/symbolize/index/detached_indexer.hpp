// SPDX-License-Identifier: MIT
// How the tools have the indexes of new builds made without making the user wait
// (NewIndexes::later): heapkit-index, started in a session of its own at the lowest CPU
// and I/O priority, as `git gc --auto` detaches. The command that met the builds names
// them from their files and exits; the next one finds their indexes ready.
#pragma once

#include "heapkit/symbolize/options.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace heapkit {

// What heapkit-index is told: where to keep the indexes and where debug files are.
struct DetachedIndexer {
    std::string program; // heapkit-index
    std::string cache_directory;
    std::vector<std::string> debug_dirs;
    std::string sysroot;
};

// The heapkit-index to start: $HEAPKIT_INDEXER when set (set and empty: none), else the
// one beside this process's executable, where the tools are installed together. Empty
// when there is none.
std::string sibling_indexer();

// For SymbolizeOptions::index_later: starts `indexer.program --background` on the paths
// and returns at once. The child has no descriptor of ours (its standard streams are
// /dev/null), no LD_PRELOAD or MALLOC_CONF, default signal dispositions and an empty
// mask, and outlives us; it takes each build's lock (build_lock.hpp) without waiting, so
// builds already under way are left to their builder. It is not waited for: a command
// exits soon after, and init reaps it. Returns why it could not be started, if so.
IndexBuilder detached_index_builder(DetachedIndexer indexer);

// heapkit-index --background, before it starts: the lowest CPU and I/O priority (the
// user's next command comes first), at most `max_cpu_seconds` of CPU (then the kernel
// ends it: a file whose DWARF takes longer is left unindexed rather than burn a core),
// and an error, so that nothing is built, when the cache's file system has less than
// `min_free_bytes` free (an index is tens of MB: a full disk is not filled further).
Result<void> enter_background(const std::string& cache_directory, unsigned max_cpu_seconds = 600,
                              uint64_t min_free_bytes = uint64_t{256} << 20);

} // namespace heapkit
