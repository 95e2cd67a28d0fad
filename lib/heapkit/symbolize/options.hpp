// SPDX-License-Identifier: MIT
// How frames are named: where binaries and debug information are, and what is kept
// between calls.
#pragma once

#include "heapkit/util/error.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
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

// Has the address indexes of the files at `paths` made, in another process, in the
// cache directory; returns what went wrong, one sentence each.
using IndexBuilder = std::function<std::vector<std::string>(const std::vector<std::string>& paths)>;

// What becomes of a build that has no address index in the cache directory yet, when
// there is no index_builder (the tools; the runtime sets one). Either way its frames are
// the same: an index answers exactly what its file does.
enum class NewIndexes {
    none,  // named from its file, this time and every time
    now,   // its index is built in this call (waiting for another process building it),
           // then it is named from it: the first call pays ~4x, every later one a lookup
    later, // named from its file; then `index_later` is handed the files, to have their
           // indexes made for the next call without making this one wait
};

// Where binaries and debug information are, and whether to look at all.
struct SymbolizeOptions {
    bool names = true;                   // false: read build ids only, name nothing
    std::vector<std::string> debug_dirs; // extra roots with /usr/lib/debug's layouts
    std::string sysroot;                 // prefix for every path no rewrite matched
    std::vector<PathRewrite> path_map;   // the longest matching `from` wins
    std::string main_binary;             // the program's executable, wherever the dump says
    // --strict: a file that may be a later build than the one that ran (modified after
    // the dump, symbolize/later_builds.hpp) is not used, rather than used with a warning.
    bool refuse_later_builds = false;
    bool progress = false;             // report progress on stderr
    std::string cache_directory;       // where address indexes are kept; empty: nowhere
    std::shared_ptr<KeptSymbols> kept; // files and answers kept between calls; null: none
    // Set: every file is named from its address index in `cache_directory`, made by this
    // for files that have none; only a file it could not index is read for names. For a
    // process that must not hold DWARF (the runtime: libc's alone is tens of MB).
    IndexBuilder index_builder;
    NewIndexes new_indexes = NewIndexes::none; // without an index_builder
    // For NewIndexes::later: starts making the indexes of the files at `paths` (the tools
    // run a detached heapkit-index) and returns at once; what it says is warned about.
    IndexBuilder index_later;
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
    size_t files = 0;  // files held open now
    size_t frames = 0; // addresses whose answers are kept now
    size_t opened = 0; // files opened, over its life
    size_t hits = 0;   // lookups answered from memory
    size_t misses = 0; // lookups that went to the file
    // Lookups answered from an address index (mapped, so nothing is kept in memory): with
    // an index builder, every lookup of an indexed build.
    size_t indexed = 0;
    size_t dropped = 0; // times the bounds were reached and all was dropped
};
KeptSymbolsStats kept_symbols_stats(KeptSymbols& kept);

// The cache's usual place: $HEAPKIT_CACHE_DIR, else $XDG_CACHE_HOME/heapkit, else
// ~/.cache/heapkit; empty when none can be named.
std::string default_cache_directory();

// Whether the tools may use `directory` as their cache: it must be the user's own and
// writable by no one else, or not exist yet (it is then made so, mode 0700). The error is
// one line for the user, why and what to do; the tools then run on without a cache (set
// no cache_directory). A cache someone else can write is one they can turn against us:
// planted links would have us overwrite the user's files, planted entries name frames.
Result<void> check_cache_directory(const std::string& directory);

// Why no file names a module's frames.
enum class FileProblem {
    none,               // a file was used
    not_a_file,         // a pseudo mapping such as [vdso]
    missing,            // none could be opened where it was looked for
    other_build,        // its code does not map as the dump's mapping
    other_architecture, // built for another machine than the program
};

// What symbolization made of one file the dump maps (its mappings in every dump
// together), for a summary of what stayed unnamed and what would name it.
struct ModuleReport {
    std::string path;     // as the dump names it
    std::string build_id; // of the file used, when one was and has one
    FileProblem problem = FileProblem::none;
    std::string problem_text;      // the problem as a sentence naming the file looked at
    bool has_symtab = false;       // .symtab (or .gnu_debugdata) in the file or its debug file
    bool has_dynsym = false;       // exported symbols (.dynsym) only, where no .symtab
    bool has_debug_info = false;   // DWARF, in the file or a separate debug file
    std::string package;           // the Debian package that installed it, when known
    size_t addresses = 0;          // its distinct addresses that stacks run through
    std::vector<uint64_t> offsets; // their file offsets, ascending
    // File offsets of those left without a name, ascending (jemalloc's own stripped
    // internals aside: they are cut from stacks anyway).
    std::vector<uint64_t> unnamed;
    // ELF vaddrs where the functions holding them start, ascending, for those its
    // call-frame information places (frames shown as "<file>!0x<start>").
    std::vector<uint64_t> unnamed_functions;
    // What the stacks through any of `unnamed` hold, in the unit the command shows (bytes
    // in use, by default); set once the profile is loaded (load/unnamed_share.hpp).
    int64_t unnamed_value = 0;
};

// How much of a profile stacks through unnamed addresses hold, in the unit the command
// shows: what the summary of unnamed frames says (symbolize/module_report.hpp).
struct UnnamedShare {
    int64_t total = 0;                 // every stack's
    int64_t without_debug = 0;         // stacks through an unnamed address of a file without debug
                                       // information (no DWARF), each stack once
    std::string what = "bytes in use"; // the unit, as the sentence says it
};

} // namespace heapkit
