// SPDX-License-Identifier: MIT
// The flag set and error handling jeprof2pprof and heapfold share; only cmd/ sees CLI11.
#pragma once

#include "heapkit/pipeline.hpp"
#include "version.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fmt/format.h>
#include <new>
#include <system_error>

namespace heapkit::cmd {

// `path` made absolute against the working directory. Paths go on to libdwfl, which takes
// a relative debug directory against each binary's own directory instead.
inline std::string absolute_path(std::string path) {
    std::error_code failed;
    std::filesystem::path absolute = std::filesystem::absolute(path, failed);
    return path.empty() || failed ? path : absolute.string();
}

// --path-map's OLD=NEW with NEW made absolute; OLD is a path as the dump spells it.
inline std::string absolute_path_map(std::string pair) {
    size_t equals = pair.find('=');
    if (equals == std::string::npos || equals + 1 == pair.size()) {
        return pair; // malformed (the tool says so) or NEW empty: nothing to resolve
    }
    return pair.substr(0, equals + 1) + absolute_path(pair.substr(equals + 1));
}

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
        ->option_text("PATH")
        ->transform(absolute_path);
    app.add_option("--sysroot", options.symbols.sysroot,
                   "look for every mapped file under DIR (a container's or host's root)")
        ->option_text("DIR")
        ->transform(absolute_path);
    app.add_option("--path-map", options.path_map,
                   "open files under directory (or file) OLD under NEW instead; whole path "
                   "components match (repeatable)")
        ->option_text("OLD=NEW")
        ->transform(absolute_path_map)
        ->allow_extra_args(false); // one value per flag: the dumps that follow stay dumps
    app.add_option("--debug-dir", options.symbols.debug_dirs,
                   "also look for debug files under DIR, in the layouts of /usr/lib/debug "
                   "(repeatable)")
        ->option_text("DIR")
        ->transform(absolute_path)
        ->allow_extra_args(false);
    app.add_flag_callback(
        "--no-cache", [&options] { options.cache = false; },
        "neither read nor write the frame cache ($HEAPKIT_CACHE_DIR, else "
        "$XDG_CACHE_HOME/heapkit, else ~/.cache/heapkit)");
    app.add_flag("-q,--quiet", options.quiet, "no progress line and no warnings");
    app.add_flag("--strict", options.strict,
                 "exit with status 2 when any frame stays unnamed (output is still written)");
    app.set_version_flag("--version", std::string(app.get_name()) + " (heapkit) " + version);
}

// Parses argv, runs `tool`, prints warnings and errors as "<name>: ...", returns the
// exit status: 0 done, 1 usage, input or output error, 2 under --strict when a frame
// stayed unnamed.
template <class Tool>
int parse_and_run(CLI::App& app, int argc, char** argv, const ToolOptions& options, Tool tool) {
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

// parse_and_run, with the one catch of the tools: what the library reports as Result
// errors, a failed allocation (or an exception from a dependency) is reported the same
// way, after unwinding has removed any temporary output file.
template <class Tool>
int run(CLI::App& app, int argc, char** argv, const ToolOptions& options, Tool tool) {
    try {
        return parse_and_run(app, argc, argv, options, tool);
    } catch (const std::bad_alloc&) {
        fmt::print(stderr,
                   "{}: error: out of memory (the input needs more memory than this "
                   "process may allocate)\n",
                   app.get_name());
    } catch (const std::exception& error) {
        fmt::print(stderr, "{}: error: {}\n", app.get_name(), error.what());
    }
    return 1;
}

} // namespace heapkit::cmd
