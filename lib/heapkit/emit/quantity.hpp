// SPDX-License-Identifier: MIT
// Numbers as the views print them: as go tool pprof -top does in the tables, as
// flamegraph.pl does in flame graphs' titles.
#pragma once

#include <cstdint>
#include <string>

namespace heapkit {

// Bytes in B, kB, MB, GB, TB (1024 apart: "240.00kB", "512B"); counts as they are.
std::string quantity(int64_t value, bool bytes);

// The same for a rate or a mean: "7.12kB", "512.5B", "0B", counts with one decimal below
// 1000.
std::string quantity(double value, bool bytes);

// 1234567 -> "1,234,567".
std::string with_thousands(uint64_t value);

// The size of `part` in `total` as go tool pprof's tables print it: "12.50%" (a change's
// sign is in its value, not here); "0.00%" of nothing.
std::string share_percent(int64_t part, int64_t total);

// 100 * part / total with two decimals ("12.50"), negative parts with a '-'.
std::string percent_of(uint64_t part, uint64_t total);
std::string percent_of(int64_t part, uint64_t total);

} // namespace heapkit
