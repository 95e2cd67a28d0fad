// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/read/raw_dump.hpp"
#include "heapkit/unsample/heap_values.hpp"

#include <cstdint>

namespace heapkit {

// Estimated true totals for one sampled (objects, bytes) pair.
struct Unsampled {
    int64_t objects = 0;
    int64_t bytes = 0;
};

// Undoes jemalloc's Poisson sampling at mean period `period` bytes (formats.md §2):
//   scale = 1 / (1 - exp(-(bytes/objects) / period)); objects' = objects*scale; bytes' =
//   bytes*scale.
// A pair with a zero member yields (0, 0). `period` of 0 is treated as 1.
//
// Rounding rule (the one heapkit uses everywhere): each value is computed in double
// precision and rounded to the nearest integer, halves away from zero; values past
// INT64_MAX saturate. Every rounded value is within 0.5 of the exact figure, so a sum
// over N samples is within N/2 of the float sum.
Unsampled unsample(uint64_t objects, uint64_t bytes, uint64_t period);

// The scale itself, for objects of `average_bytes` (> 0): what one sampled object of that
// size stands for. An allocation log weighs each allocation by it, exactly.
double unsample_scale(double average_bytes, uint64_t period);

// The rounding rule above, for a sum of scaled values.
int64_t round_saturating(double value);

// unsample() applied to the cur and accum pairs of one count line.
HeapValues unsample(const SampledCounts& counts, uint64_t period);

} // namespace heapkit
