// SPDX-License-Identifier: MIT
// When dumps given together may be merged into one profile: a merge adds up what several
// processes of one program held (runs, workers), so it is refused for dumps of different
// programs (a prefix globbed over a wrapper's dumps: bash, readlink, python3) and for
// several snapshots of one process (prof_interval's dumps: their sum counts what the
// process held each time), with what to give instead.
#pragma once

#include "heapkit/read/raw_dump.hpp"
#include "heapkit/util/error.hpp"

#include <span>

namespace heapkit {

// Ok when `dumps` may be merged; else one message naming each program (with its count and
// a pattern for its dumps) or the process and its snapshots. The same file given twice
// is not refused here (it is counted twice, with a warning).
Result<void> check_mergeable(std::span<const RawDump> dumps);

} // namespace heapkit
