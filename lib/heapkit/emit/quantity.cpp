// SPDX-License-Identifier: MIT
#include "heapkit/emit/quantity.hpp"

#include <cmath>
#include <fmt/format.h>
#include <iterator>

namespace heapkit {
namespace {

// flamegraph.pl divides 100 * part, an integer, by the total: so do we, in the same
// order, so that the rounding to two decimals agrees (Perl too turns to floating point
// when 100 * part overflows).
template <class Integer> std::string percent(Integer part, uint64_t total) {
    Integer hundredfold = 0;
    double exact = __builtin_mul_overflow(part, 100, &hundredfold)
                       ? static_cast<double>(part) * 100
                       : static_cast<double>(hundredfold);
    return fmt::format("{:.2f}", total == 0 ? 0.0 : exact / static_cast<double>(total));
}

constexpr const char* units[] = {"B", "kB", "MB", "GB", "TB"};

// The unit that leaves `magnitude` below 1024 (TB at most), and the magnitude in it.
size_t scale(double& magnitude) {
    size_t unit = 0;
    while (magnitude >= 1024 && unit + 1 < std::size(units)) {
        magnitude /= 1024;
        ++unit;
    }
    return unit;
}

} // namespace

std::string quantity(int64_t value, bool bytes) {
    if (!bytes) {
        return fmt::format("{}", value);
    }
    double magnitude = std::fabs(static_cast<double>(value));
    size_t unit = scale(magnitude);
    if (unit == 0) {
        return fmt::format("{}B", value);
    }
    return fmt::format("{}{:.2f}{}", value < 0 ? "-" : "", magnitude, units[unit]);
}

std::string quantity(double value, bool bytes) {
    double magnitude = std::fabs(value);
    if (magnitude < 0.05) {
        return bytes ? "0B" : "0"; // what one decimal would show as 0.0, or -0.0
    }
    const char* sign = value < 0 ? "-" : "";
    if (!bytes) {
        return magnitude < 1000 ? fmt::format("{}{:.1f}", sign, magnitude)
                                : fmt::format("{}{:.0f}", sign, magnitude);
    }
    size_t unit = scale(magnitude);
    if (unit == 0) {
        return fmt::format("{}{:.1f}B", sign, magnitude);
    }
    return fmt::format("{}{:.2f}{}", sign, magnitude, units[unit]);
}

std::string share_percent(int64_t part, int64_t total) {
    return total == 0 ? "0.00%"
                      : fmt::format("{:.2f}%", std::fabs(100.0 * static_cast<double>(part) /
                                                         static_cast<double>(total)));
}

std::string with_thousands(uint64_t value) {
    std::string digits = fmt::format("{}", value);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) {
            out += ',';
        }
        out += digits[i];
    }
    return out;
}

std::string percent_of(uint64_t part, uint64_t total) {
    return percent(part, total);
}

std::string percent_of(int64_t part, uint64_t total) {
    return percent(part, total);
}

} // namespace heapkit
