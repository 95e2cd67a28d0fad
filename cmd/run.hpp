// SPDX-License-Identifier: MIT
// jeprof2pprof's and heapfold's main once their flags are declared: argv read into the
// options, the library's run_tool (heapkit.hpp), which decides what the tool does and its
// exit status, and the one catch of the tools.
#pragma once

#include "flags.hpp"
#include "usage_error.hpp"

#include <cstdio>
#include <exception>
#include <malloc.h>
#include <new>

namespace heapkit::cmd {

// Blocks of 128 KiB and more are mapped apart and unmapped once freed, always. glibc
// raises that threshold (up to 32 MiB) each time such a block is freed, and the blocks
// asked for after that come from the heap, which keeps what is freed: a tool that lets go
// of a million stacks' tables as it writes (heapfold --html) then peaked 50-100 MiB above
// what it held. Not for the runtime: a host's allocator settings are its own.
inline void unmap_freed_blocks() {
#ifdef M_MMAP_THRESHOLD
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
}

// Parses argv into `options` and runs the tool. What the library reports as Result errors,
// a failed allocation (or an exception from a dependency) is reported the same way, after
// unwinding has removed any temporary output file. Usage errors exit 1; --help and
// --version, 0.
inline int run(CLI::App& app, int argc, char** argv, ToolOptions& options) {
    std::string tool = app.get_name();
    try {
        try {
            app.parse(argc, argv);
        } catch (const CLI::ParseError& error) {
            return usage_error(app, error);
        }
        unmap_freed_blocks();
        return run_tool(tool, options);
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
