// SPDX-License-Identifier: MIT
// Address indexes made ahead of the runs that use them: by a deployment that indexes its
// binaries once (heapkit-index), and for the runtime, which has another process make
// them rather than hold a module's DWARF in the process it profiles.
#pragma once

#include "heapkit/symbolize/index/build_lock.hpp"
#include "heapkit/symbolize/options.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace heapkit {

// What became of one file asked for.
struct IndexedFile {
    std::string path;    // as asked
    std::string key;     // its build id, "-symbols" added when it has no DWARF; empty: none
    std::string index;   // the index file in the cache; empty when none is there
    bool built = false;  // false: it was there already (or could not be made)
    uint64_t bytes = 0;  // the index file's size
    std::string problem; // why no index is there: the sentence names the file
};

// Makes the address index of each file in `paths` that has none yet in
// `options.cache_directory` (which must be set), as the symbolizer would have made it
// for a dump mapping that file: debug files are looked for under `options.debug_dirs`
// and the sysroot's. Files are indexed side by side (IndexStore::build), a few at a
// time, each closed once its index is saved: memory for those few (a file with much DWARF
// alone, the memory of two big builds side by side is never held). Problems of
// the cache as a whole (a directory that cannot be written) go to `warnings`. A build
// another process is indexing is waited for with BuildLock::Wait::yes, else left to it
// (its problem says so).
std::vector<IndexedFile> index_files(const std::vector<std::string>& paths,
                                     const SymbolizeOptions& options,
                                     std::vector<std::string>& warnings,
                                     BuildLock::Wait wait = BuildLock::Wait::yes);

} // namespace heapkit
