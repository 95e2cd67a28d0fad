// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"

#include <string>

namespace heapkit {

// The whole text of one input, decompressed when it was gzipped.
struct InputText {
    std::string name;  // as the user named it; "<stdin>" for "-"
    std::string bytes; // decompressed contents
};

// Reads `path` ("-" means standard input) completely, inflating gzip input
// (detected by its magic bytes, not by the file name).
Result<InputText> read_input(const std::string& path);

} // namespace heapkit
