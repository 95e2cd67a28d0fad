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
    app.add_flag("!--no-symbolize", options.symbolize,
                 "leave frames unnamed (addresses, mappings and build ids only)");
    app.set_version_flag("--version", std::string(app.get_name()) + " (heapkit) " + version);
}

// Parses argv, runs `tool`, prints warnings and errors as "<name>: ...", returns the
// exit status: 0 done, 1 usage, input or output error.
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
    return 0;
}

} // namespace heapkit::cmd
