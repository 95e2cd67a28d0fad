// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/symbolize/module_report.hpp"
#include "heapkit/symbolize/options.hpp"

#include <optional>
#include <string>
#include <vector>

namespace heapkit {

// What symbolization could not do, for a summary on stderr.
struct SymbolizeReport {
    std::vector<std::string> warnings; // one line each, without a "warning:" prefix
    size_t unnamed_locations = 0;      // locations left without a name (allocator aside)
    std::vector<ModuleReport> modules; // per file the dump maps (describe_unnamed()); names only
    std::vector<uint64_t> unmapped;    // runtime addresses in no mapping, left unnamed
    // Why a file could not be opened for want of descriptors (EMFILE, ENFILE), when one
    // could not: its names are missing for the process's reason, not the file's.
    std::optional<std::string> out_of_descriptors;
};

// The file to open for `module`: --binary for the main executable, else its path
// rewritten by the longest matching path_map entry, else under sysroot.
std::string locate_file(const Module& module, const SymbolizeOptions& options);

// Opens each module's file once, records its build id, and names every location it
// contains: DWARF inline chains with files and lines where there is debug information,
// symbol names otherwise. Locations in modules whose file cannot be found, or does not
// fit the dump's mapping, keep the names a jeprof symbolized file gave them, if any.
SymbolizeReport symbolize(Profile& profile, const SymbolizeOptions& options);

} // namespace heapkit
