// SPDX-License-Identifier: MIT
// Values as go tool pprof -top prints them, for the tables.
#pragma once

#include <cstdint>
#include <string>

namespace heapkit {

// Bytes in B, kB, MB, GB, TB (1024 apart: "240.00kB", "512B"); counts as they are.
std::string quantity(int64_t value, bool bytes);

// The same for a rate or a mean: "7.12kB", "512.5B", "0B", counts with one decimal below
// 1000.
std::string quantity(double value, bool bytes);

} // namespace heapkit
