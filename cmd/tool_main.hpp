// SPDX-License-Identifier: MIT
// The flag set and error handling jeprof2pprof and heapfold share; only cmd/ sees CLI11.
#pragma once

#include "heapkit/pipeline.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>

namespace heapkit::cmd {

inline constexpr const char* version = "0.1.0";

// `sample_help` says what --sample chooses for this tool.
inline void add_common_flags(CLI::App& app, ToolOptions& options, const std::string& sample_help) {
    app.add_option("DUMP", options.inputs,
                   "jemalloc heap_v2 dumps or jeprof symbolized profiles, plain or gzipped; "
                   "'-' reads standard input; several are merged")
        ->required();
    app.add_option("-o,--output", options.output, "write here instead of standard output")
        ->option_text("FILE");
    app.add_option("--sample", options.sample,
                   sample_help + ": inuse_space (default), inuse_objects, alloc_space, "
                                 "alloc_objects")
        ->option_text("TYPE");
    app.add_flag("--threads", options.per_thread, "split every stack by jemalloc thread");
    app.add_flag("--keep-allocator-frames", options.keep_allocator_frames,
                 "keep malloc, operator new and jemalloc-internal frames");
    app.add_flag_callback(
        "--no-symbolize", [&options] { options.symbolize = false; },
        "leave frames unnamed (addresses, mappings and build ids only)");
    app.add_option("--binary", options.symbols.main_binary,
                   "the program's executable, wherever the dump says it was")
        ->option_text("PATH");
    app.add_option("--sysroot", options.symbols.sysroot,
                   "look for every mapped file under DIR (a container's or host's root)")
        ->option_text("DIR");
    app.add_option("--path-map", options.path_map,
                   "open files whose path starts with OLD under NEW instead (repeatable)")
        ->option_text("OLD=NEW")
        ->allow_extra_args(false); // one value per flag: the dumps that follow stay dumps
    app.add_option("--debug-dir", options.symbols.debug_dirs,
                   "also look for debug files under DIR, in the layouts of /usr/lib/debug "
                   "(repeatable)")
        ->option_text("DIR")
        ->allow_extra_args(false);
    app.add_flag_callback(
        "--no-cache", [&options] { options.cache = false; },
        "neither read nor write the frame cache ($HEAPKIT_CACHE_DIR, else "
        "$XDG_CACHE_HOME/heapkit, else ~/.cache/heapkit)");
    app.add_flag("-q,--quiet", options.quiet, "no progress line and no warnings");
    app.add_flag("-v,--verbose", options.verbose,
                 "after each module's count of addresses without a name, list them");
    app.add_flag("--strict", options.strict,
                 "exit with status 2 when any frame stays unnamed (output is still written)");
    app.set_version_flag("--version", std::string(app.get_name()) + " (heapkit) " + version);
}

// Parses argv, runs `tool`, prints warnings and errors as "<name>: ...", returns the
// exit status: 0 done, 1 usage, input or output error, 2 under --strict when a frame
// stayed unnamed.
template <class Tool>
int run(CLI::App& app, int argc, char** argv, const ToolOptions& options, Tool tool) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& done) {
        return app.exit(done);
    } catch (const CLI::ParseError& error) {
        app.exit(error);
        return 1;
    }
    auto report = tool(options);
    if (!report) {
        fmt::print(stderr, "{}: error: {}\n", app.get_name(), report.error().message);
        return 1;
    }
    for (const std::string& warning : report->warnings) {
        fmt::print(stderr, "{}: warning: {}\n", app.get_name(), warning);
    }
    return options.strict && report->unresolved > 0 ? 2 : 0;
}

} // namespace heapkit::cmd
