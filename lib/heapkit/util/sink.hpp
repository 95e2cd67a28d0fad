// SPDX-License-Identifier: MIT
// Where output goes: a sink taking it a piece at a time, and a file that appears only
// when all of it was written.
#pragma once

#include "heapkit/util/error.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace heapkit {

// Where output goes, a piece at a time; the first error stops the writer.
using Sink = std::function<Result<void>(std::string_view)>;

// Runs `produce` with a sink into `path` ("" or "-": standard output) and keeps what it
// wrote only when it succeeds: a file is written beside its target and renamed into
// place, so a failure leaves the target untouched. `binary` output is refused on a
// terminal.
Result<void> write_output(const std::string& path, bool binary,
                          const std::function<Result<void>(const Sink&)>& produce);

} // namespace heapkit
