// SPDX-License-Identifier: MIT
#include "heapkit/unsample/unsample.hpp"

#include <cmath>
#include <limits>

namespace heapkit {
int64_t round_saturating(double value) {
    // 2^63 is exactly representable; anything at or above it cannot be an int64.
    constexpr double limit = 9223372036854775808.0;
    if (!(value < limit)) {
        return std::numeric_limits<int64_t>::max();
    }
    return std::llround(value);
}

double unsample_scale(double average_bytes, uint64_t period) {
    double r = static_cast<double>(period == 0 ? 1 : period);
    // -expm1(-x) is 1 - exp(-x) without cancellation when avg is tiny next to the period.
    double denominator = -std::expm1(-average_bytes / r);
    return denominator > 0 ? 1.0 / denominator : 1.0;
}

Unsampled unsample(uint64_t objects, uint64_t bytes, uint64_t period) {
    if (objects == 0 || bytes == 0) {
        return {};
    }
    double n = static_cast<double>(objects);
    double s = static_cast<double>(bytes);
    double scale = unsample_scale(s / n, period);
    return {round_saturating(n * scale), round_saturating(s * scale)};
}

HeapValues unsample(const SampledCounts& counts, uint64_t period) {
    Unsampled cur = unsample(counts.cur_objects, counts.cur_bytes, period);
    Unsampled accum = unsample(counts.accum_objects, counts.accum_bytes, period);
    return {accum.objects, accum.bytes, cur.objects, cur.bytes};
}

} // namespace heapkit
