// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/symbolize/symbolize.hpp"
#include "heapkit/util/error.hpp"

#include <string>
#include <vector>

namespace heapkit {

// What both tools take, as the user gave it.
struct ToolOptions {
    std::vector<std::string> inputs; // dump paths; "-" is standard input
    std::string output;              // "" or "-" is standard output
    std::string sample = "inuse_space";
    bool symbolize = true;
    bool per_thread = false;
    bool keep_allocator_frames = false;
    bool cache = true;                 // use the frame cache (default_cache_directory())
    bool quiet = false;                // no progress line, no warnings
    bool verbose = false;              // list every address left without a name
    bool strict = false;               // unnamed frames make exit status 2
    std::vector<std::string> path_map; // "OLD=NEW" as typed; parsed by the tools
    SymbolizeOptions symbols;          // where binaries and debug information are
    // jeprof2pprof only
    int compress_level = 6; // zlib level of the gzipped profile
    // heapfold only
    std::string frame = "function"; // function, function+line or address
    bool annotate_inline = false;   // mark inlined frames with "_[i]"
};

// Warnings for the user (unreadable binaries, unnamed addresses), one line each.
struct ToolReport {
    std::vector<std::string> warnings;
    size_t unresolved = 0; // locations left without a name (allocator internals aside)
};

// jeprof2pprof: dumps -> gzipped pprof at `output`.
Result<ToolReport> run_jeprof2pprof(const ToolOptions& options);

// heapfold: dumps -> collapsed stacks at `output`.
Result<ToolReport> run_heapfold(const ToolOptions& options);

} // namespace heapkit
