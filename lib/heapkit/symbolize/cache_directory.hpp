// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// Removes the least recently used regular files of `directory` (by modification time,
// which users of a file refresh) until the rest take at most `max_bytes`. Files other
// runs remove meanwhile are simply gone. A directory that cannot be listed gives a
// warning naming `what` ("the frame cache").
void trim_cache_directory(const std::string& directory, uint64_t max_bytes, std::string_view what,
                          std::vector<std::string>& warnings);

} // namespace heapkit
