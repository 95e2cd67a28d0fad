// SPDX-License-Identifier: MIT
#include "heapkit/emit/quantity.hpp"

#include <cmath>
#include <fmt/format.h>
#include <iterator>

namespace heapkit {
namespace {

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

} // namespace heapkit
