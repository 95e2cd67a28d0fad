// SPDX-License-Identifier: MIT
// How frames are named: where binaries and debug information are, and what is kept
// between calls.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace heapkit {

// `from` -> `to` for file paths that begin with the whole path components of `from` (a
// dump taken in a container or on another host names files where they were there).
struct PathRewrite {
    std::string from;
    std::string to;
};

class KeptSymbols; // symbolize/kept_symbols.hpp

// Where binaries and debug information are, and whether to look at all.
struct SymbolizeOptions {
    bool names = true;                   // false: read build ids only, name nothing
    std::vector<std::string> debug_dirs; // extra roots with /usr/lib/debug's layouts
    std::string sysroot;                 // prefix for every path no rewrite matched
    std::vector<PathRewrite> path_map;   // the longest matching `from` wins
    std::string main_binary;             // the program's executable, wherever the dump says
    bool progress = false;               // report progress on stderr
    std::string cache_directory;         // where named frames are remembered; empty: nowhere
    std::shared_ptr<KeptSymbols> kept;   // files and answers kept between calls; null: none
};

// For a long-running process that symbolizes again and again (the runtime serves many
// profiles of one process): each file opened once and kept (opened again when it changes
// on disk), and up to `max_frames` answers remembered in memory, for calls whose options
// name the same debug directories and sysroot as `options`. Over `max_files` files or
// `max_frames` answers, what is kept is dropped and found afresh. Calls sharing one take
// turns.
std::shared_ptr<KeptSymbols> make_kept_symbols(const SymbolizeOptions& options,
                                               size_t max_frames = size_t{1} << 20,
                                               size_t max_files = 1024);

// What a KeptSymbols holds and has saved, for telemetry.
struct KeptSymbolsStats {
    size_t files = 0;   // files held open now
    size_t frames = 0;  // addresses whose answers are kept now
    size_t opened = 0;  // files opened, over its life
    size_t hits = 0;    // lookups answered from memory
    size_t misses = 0;  // lookups that went to the file (or the frame cache)
    size_t dropped = 0; // times the bounds were reached and all was dropped
};
KeptSymbolsStats kept_symbols_stats(KeptSymbols& kept);

// The frame cache's usual place: $HEAPKIT_CACHE_DIR, else $XDG_CACHE_HOME/heapkit, else
// ~/.cache/heapkit; empty when none can be named.
std::string default_cache_directory();

} // namespace heapkit
