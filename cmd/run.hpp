// SPDX-License-Identifier: MIT
// How jeprof2pprof and heapfold run once their flags are read: one request to the library,
// one view written, warnings and errors printed as "<tool>: ...", and the exit status.
#pragma once

#include "flags.hpp"

#include <cstdio>
#include <exception>
#include <new>
#include <unistd.h>

namespace heapkit::cmd {

inline std::vector<Input> inputs_of(const std::vector<std::string>& paths) {
    std::vector<Input> inputs;
    for (const std::string& path : paths) {
        inputs.push_back(Input{path, std::nullopt});
    }
    return inputs;
}

// What the flags leave to be filled in after parsing: the files, the cache, the progress
// line, and the view's frames and sample type, which loading chose.
inline void complete(ToolOptions& options) {
    ViewRequest& request = options.request;
    request.inputs = inputs_of(options.inputs);
    request.bases = inputs_of(options.bases);
    if (options.cache) {
        request.load.symbols.cache_directory = default_cache_directory();
    }
    request.load.symbols.progress = !options.quiet && ::isatty(STDERR_FILENO);
    FoldedOptions& folded = options.view.folded;
    folded.sample = request.load.sample;
    folded.thread_frames = request.load.per_thread;
}

// The view written; 0 done, 1 an input or output error, 2 under --strict when a frame
// stayed unnamed.
inline int show(const char* tool, const ToolOptions& options) {
    auto views = load_views(options.request);
    Result<void> written =
        views
            ? write_output(options.output, is_binary(options.view.kind),
                           [&](const Sink& sink) { return write_view(*views, options.view, sink); })
            : tl::unexpected(views.error());
    if (!written) {
        fmt::print(stderr, "{}: error: {}\n", tool, written.error().message);
        return 1;
    }
    for (const std::string& warning : views->report.warnings) {
        if (!options.quiet) {
            fmt::print(stderr, "{}: warning: {}\n", tool, warning);
        }
    }
    return options.strict && views->report.unnamed_locations > 0 ? 2 : 0;
}

// Parses argv into `options` and shows the view, with the one catch of the tools: what
// the library reports as Result errors, a failed allocation (or an exception from a
// dependency) is reported the same way, after unwinding has removed any temporary output
// file. Usage errors exit 1.
inline int run(CLI::App& app, int argc, char** argv, ToolOptions& options) {
    std::string tool = app.get_name();
    try {
        app.parse(argc, argv);
        complete(options);
        return show(tool.c_str(), options);
    } catch (const CLI::Success& done) {
        return app.exit(done);
    } catch (const CLI::ParseError& error) {
        app.exit(error);
    } catch (const std::bad_alloc&) {
        fmt::print(stderr,
                   "{}: error: out of memory (the input needs more memory than this "
                   "process may allocate)\n",
                   tool);
    } catch (const std::exception& error) {
        fmt::print(stderr, "{}: error: {}\n", tool, error.what());
    }
    return 1;
}

} // namespace heapkit::cmd
