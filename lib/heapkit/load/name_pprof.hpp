// SPDX-License-Identifier: MIT
// A pprof profile named in place (jeprof2pprof on a pprof of its own): what in-process
// exporters write without names gets them, and keeps everything else as it was.
#pragma once

#include "heapkit/emit/pprof_names.hpp"
#include "heapkit/load/load.hpp"

#include <string>
#include <string_view>

namespace heapkit {

struct NamedPprof {
    std::string gzipped; // the profile with names added (emit/pprof_names.hpp)
    LoadReport report;   // what could not be named, as load_profile says it
    PprofNamesAdded added;
};

// `inflated`, a pprof profile that `source` names, read and checked as load_profile reads
// one, its unnamed locations named by the symbolizer with `options.symbols` (build ids,
// --binary, --sysroot, --path-map, debug directories, debuginfod, the address cache),
// then gzipped at `compress_level`.
Result<NamedPprof> name_pprof(std::string_view inflated, const std::string& source,
                              const LoadOptions& options, int compress_level);

} // namespace heapkit
