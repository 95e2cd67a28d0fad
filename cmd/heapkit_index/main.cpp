// SPDX-License-Identifier: MIT
// heapkit-index: make the address indexes heapfold, jeprof2pprof and the runtime name
// frames from, ahead of the first profile (at deployment), or for the runtime, which
// runs it rather than read a module's DWARF in the process it profiles.
#include "heapkit/heapkit.hpp"
#include "usage_error.hpp"
#include "version.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <fmt/format.h>
#include <new>

int main(int argc, char** argv) {
    heapkit::IndexToolOptions options;
    heapkit::SymbolizeOptions& symbols = options.symbols;
    CLI::App app("Make the address index of each ELF file (executable or shared library) "
                 "that has none yet in the cache, so that every later profile of its build "
                 "is named by lookups, from the first.",
                 "heapkit-index");
    app.add_option("FILE", options.files, "executables and shared libraries to index");
    app.add_option("--cache-dir", symbols.cache_directory,
                   "the cache to keep the indexes in (default: $HEAPKIT_CACHE_DIR, else "
                   "$XDG_CACHE_HOME/heapkit, else ~/.cache/heapkit)")
        ->option_text("DIR");
    app.add_option("--debug-dir", symbols.debug_dirs,
                   "also look for separate debug files under DIR (as /usr/lib/debug); "
                   "repeatable")
        ->option_text("DIR");
    app.add_option("--sysroot", symbols.sysroot,
                   "look for debug files under DIR/usr/lib/debug too (a target's root)")
        ->option_text("DIR");
    app.add_flag("-q,--quiet", options.quiet, "print problems only, not a line per file");
    app.add_flag("--background", options.background,
                 "run as heapfold and jeprof2pprof start it for builds they meet without an "
                 "index: at the lowest CPU and I/O priority, at most 10 minutes of CPU, "
                 "nothing when the cache's file system has under 256 MB free, and a build "
                 "another process is indexing left to it");
    app.add_flag("--stats", options.stats,
                 "say what the cache holds: where, how many indexes, their bytes against the "
                 "bound they are kept within, and the rest of the cache's files");
    app.add_flag("--prune", options.prune,
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
        if (options.files.empty() && !options.stats && !options.prune) {
            return heapkit::cmd::usage_error(app, CLI::RequiredError("FILE (or --stats, --prune)"));
        }
        return heapkit::run_index_tool(options);
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "heapkit-index: error: out of memory\n");
    } catch (const std::exception& error) {
        fmt::print(stderr, "heapkit-index: error: {}\n", error.what());
    }
    return 1;
}
