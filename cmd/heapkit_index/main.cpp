// SPDX-License-Identifier: MIT
// heapkit-index: make the address indexes heapfold, jeprof2pprof and the runtime name
// frames from, ahead of the first profile (at deployment), or for the runtime, which
// runs it rather than read a module's DWARF in the process it profiles.
#include "cache_report.hpp"
#include "heapkit/symbolize/index/detached_indexer.hpp"
#include "heapkit/symbolize/index/index_files.hpp"
#include "usage_error.hpp"
#include "version.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <fmt/format.h>
#include <new>

int main(int argc, char** argv) {
    heapkit::SymbolizeOptions options;
    std::vector<std::string> files;
    bool quiet = false;
    bool background = false;
    bool stats = false;
    bool prune = false;
    CLI::App app("Make the address index of each ELF file (executable or shared library) "
                 "that has none yet in the cache, so that every later profile of its build "
                 "is named by lookups, from the first.",
                 "heapkit-index");
    app.add_option("FILE", files, "executables and shared libraries to index");
    app.add_option("--cache-dir", options.cache_directory,
                   "the cache to keep the indexes in (default: $HEAPKIT_CACHE_DIR, else "
                   "$XDG_CACHE_HOME/heapkit, else ~/.cache/heapkit)")
        ->option_text("DIR");
    app.add_option("--debug-dir", options.debug_dirs,
                   "also look for separate debug files under DIR (as /usr/lib/debug); "
                   "repeatable")
        ->option_text("DIR");
    app.add_option("--sysroot", options.sysroot,
                   "look for debug files under DIR/usr/lib/debug too (a target's root)")
        ->option_text("DIR");
    app.add_flag("-q,--quiet", quiet, "print problems only, not a line per file");
    app.add_flag("--background", background,
                 "run as heapfold and jeprof2pprof start it for builds they meet without an "
                 "index: at the lowest CPU and I/O priority, at most 10 minutes of CPU, "
                 "nothing when the cache's file system has under 256 MB free, and a build "
                 "another process is indexing left to it");
    app.add_flag("--stats", stats,
                 "say what the cache holds: where, how many indexes, their bytes against the "
                 "bound they are kept within, and the rest of the cache's files");
    app.add_flag("--prune", prune,
                 "remove the least recently used indexes beyond the bound now (every run that "
                 "adds an index does so after it)");
    app.set_version_flag("--version",
                         std::string("heapkit-index (heapkit) ") + heapkit::cmd::version);
    app.footer("Each line of output: FILE, then \"built\" or \"kept\", the build id (with "
               "\"-symbols\" when the file has no DWARF), the index's size and path.\n"
               "The indexes are kept within $HEAPKIT_CACHE_MAX_MB megabytes (default 1024): "
               "a run that adds one removes the least recently used beyond it.\n"
               "Exit status: 0 when every FILE has its index, 1 otherwise.\n"
               "Examples:\n"
               "  heapkit-index /usr/bin/redis-server /usr/lib/x86_64-linux-gnu/libc.so.6\n"
               "  heapkit-index --cache-dir /var/cache/heapkit ./build/server\n"
               "  HEAPKIT_CACHE_MAX_MB=200 heapkit-index --prune --stats");
    try {
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& error) {
            return heapkit::cmd::usage_error(app, error);
        }
        if (files.empty() && !stats && !prune) {
            return heapkit::cmd::usage_error(app, CLI::RequiredError("FILE (or --stats, --prune)"));
        }
        if (options.cache_directory.empty()) {
            options.cache_directory = heapkit::default_cache_directory();
        }
        if (options.cache_directory.empty()) {
            fmt::print(stderr, "heapkit-index: error: no cache directory: give --cache-dir, "
                               "or set HEAPKIT_CACHE_DIR or HOME\n");
            return 1;
        }
        // Unlike heapfold, there is nothing to do without a cache.
        if (auto usable = heapkit::check_cache_directory(options.cache_directory); !usable) {
            fmt::print(stderr, "heapkit-index: error: {}\n", usable.error().message);
            return 1;
        }
        if (background) {
            if (auto entered = heapkit::enter_background(options.cache_directory); !entered) {
                fmt::print(stderr, "heapkit-index: error: {}\n", entered.error().message);
                return 1;
            }
        }
        auto max_bytes = heapkit::cache_max_bytes();
        if (!max_bytes) {
            fmt::print(stderr, "heapkit-index: error: {}\n", max_bytes.error().message);
            return 1;
        }
        std::vector<std::string> warnings;
        auto results = heapkit::index_files(files, options, warnings,
                                            background ? heapkit::BuildLock::Wait::no
                                                       : heapkit::BuildLock::Wait::yes);
        for (const std::string& warning : warnings) {
            fmt::print(stderr, "heapkit-index: warning: {}\n", warning);
        }
        int status = 0;
        for (const heapkit::IndexedFile& result : results) {
            if (!result.problem.empty()) {
                fmt::print(stderr, "heapkit-index: error: {}\n", result.problem);
                status = 1;
            } else if (!quiet) {
                fmt::print("{} {} {} {} {}\n", result.path, result.built ? "built" : "kept",
                           result.key, result.bytes, result.index);
            }
        }
        if (prune || stats) {
            auto said = heapkit::cmd::tend_cache(options.cache_directory, *max_bytes, prune, stats);
            if (!said) {
                fmt::print(stderr, "heapkit-index: error: {}\n", said.error().message);
                return 1;
            }
        }
        return status;
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "heapkit-index: error: out of memory\n");
    } catch (const std::exception& error) {
        fmt::print(stderr, "heapkit-index: error: {}\n", error.what());
    }
    return 1;
}
