// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"

#include <string>
#include <string_view>

namespace heapkit {

// Where a tool's result goes. Empty path or "-" means standard output.
struct OutputTarget {
    std::string path;
    bool binary = false; // refuse to write binary data to a terminal
};

// Writes `bytes` completely or not at all: a file target is written to a temporary
// file in the same directory, flushed, and renamed over the target; on any failure
// the temporary is removed and the target is untouched.
Result<void> write_output(const OutputTarget& target, std::string_view bytes);

} // namespace heapkit
