// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"

#include <string>
#include <vector>

namespace heapkit {

struct SymbolizeOptions {
    bool names = true; // false: read build ids only, leave every location unnamed
};

// What symbolization could not do, for a summary on stderr.
struct SymbolizeReport {
    std::vector<std::string> warnings; // one line each, without a "warning:" prefix
    size_t unnamed_locations = 0;      // locations left without a name
};

// Opens each module's file once, records its build id, and names every location it
// contains from the file's symbols. Locations in modules whose file cannot be opened
// keep the names a jeprof symbolized file gave them, if any.
SymbolizeReport symbolize(Profile& profile, const SymbolizeOptions& options);

} // namespace heapkit
