// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/load/load.hpp"
#include "heapkit/read/prof_log.hpp"
#include "heapkit/read/raw_dump.hpp"

#include <vector>

namespace heapkit {

// The profile of an allocation log, its addresses placed with the map of `dumps` (exactly
// one, of the same pid: checked by its file name, and by the log's addresses, most of which
// must lie in the dump's code mappings). Refused: no dump, several, another process's, a
// log without allocations. What is doubtful (a dump whose name does not tell its pid,
// coarse timestamps) goes to `report`.
Result<Profile> load_log_profile(ProfLog log, std::vector<RawDump> dumps,
                                 const LoadOptions& options, LoadReport& report);

} // namespace heapkit
