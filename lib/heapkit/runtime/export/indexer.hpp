// SPDX-License-Identifier: MIT
// The runtime names its frames from address indexes (symbolize/address_index.hpp) that
// another process makes: heapkit-index, run once per build that has none yet. DWARF never
// enters the profiled process (libc's alone is tens of MB once read); it maps the
// finished indexes, whose few pages a profile's lookups touch are file-backed and shared.
#pragma once

#include "heapkit/symbolize/options.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace heapkit::runtime {

struct IndexerSettings {
    std::string program;         // heapkit-index; empty: none, files are read in process
    std::string cache_directory; // where the indexes are kept; empty: none
    std::chrono::milliseconds deadline{std::chrono::minutes(5)}; // then it is killed
};

// From the environment, read once: $HEAPKIT_INDEXER (set and empty: no indexer), else
// heapkit-index where it is installed (this build's, when run from the build tree; none
// when absent); the tools' cache directory ($HEAPKIT_CACHE_DIR,
// else $XDG_CACHE_HOME/heapkit, else ~/.cache/heapkit).
const IndexerSettings& indexer_settings();

// Where this process's indexes are kept now: the configured cache directory while this
// process's user can write it; else, for good, one it can (writable_cache_directory():
// the user's own cache, or a private temporary directory), said once on stderr. A
// service that switched users after start still gets its indexes made out of process.
std::string indexer_cache_directory();

// Runs `settings.program` on `paths` and waits for it (up to the deadline; then kills
// it): one process per processor this process may use (up to 4), the files shared out by
// size, so that the wait is the largest file's rather than the sum. What went wrong comes
// back one sentence each: their error lines, their exits, or why one could not be
// started. Never throws.
std::vector<std::string> run_indexer(const IndexerSettings& settings,
                                     const std::vector<std::string>& paths);

// For SymbolizeOptions::index_builder: run_indexer with indexer_settings() and
// indexer_cache_directory(), counted; its first failure said once on stderr with the
// reason. Empty (no builder) when there is no program or no cache directory.
IndexBuilder own_index_builder();

// Prometheus text: indexer runs by result.
std::string indexer_metrics();

} // namespace heapkit::runtime
