// SPDX-License-Identifier: MIT
#include "heapkit/growth/trend.hpp"

#include <algorithm>
#include <cmath>

namespace heapkit {
namespace {

// Sums of squares about each run's own means, added over runs: what a fit with one
// intercept per run and a shared slope is made of.
struct Moments {
    double sxx = 0;
    double sxy = 0;
    double syy = 0;

    void add_run(std::span<const double> x, std::span<const double> y) {
        if (x.size() < 2) {
            return; // one point fixes its run's intercept and says nothing of the slope
        }
        double mean_x = 0;
        double mean_y = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            mean_x += x[i];
            mean_y += y[i];
        }
        mean_x /= static_cast<double>(x.size());
        mean_y /= static_cast<double>(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            double dx = x[i] - mean_x;
            double dy = y[i] - mean_y;
            sxx += dx * dx;
            sxy += dx * dy;
            syy += dy * dy;
        }
    }
    double slope() const { return sxx > 0 ? sxy / sxx : 0; }
    // 1 - SSE/SST, SSE = syy - sxy^2/sxx: the same as sxy^2 / (sxx syy).
    double r_squared() const {
        if (sxx <= 0 || syy <= 0) {
            return 0;
        }
        return std::min(1.0, sxy * sxy / (sxx * syy));
    }
};

// The later half of a run of n points: from n / 2 on (the middle one with it when n is
// odd), so that three points leave two.
size_t late_start(size_t begin, size_t end) {
    return begin + (end - begin) / 2;
}

} // namespace

bool has_spread(const SeriesShape& shape) {
    for (size_t r = 0; r + 1 < shape.bounds.size(); ++r) {
        for (size_t i = shape.bounds[r] + 1; i < shape.bounds[r + 1]; ++i) {
            if (shape.x[i] != shape.x[shape.bounds[r]]) {
                return true;
            }
        }
    }
    return false;
}

Trend fit_trend(const SeriesShape& shape, std::span<const double> y) {
    Moments all;
    Moments late;
    Trend trend;
    for (size_t r = 0; r + 1 < shape.bounds.size(); ++r) {
        size_t begin = shape.bounds[r];
        size_t end = shape.bounds[r + 1];
        all.add_run(shape.x.subspan(begin, end - begin), y.subspan(begin, end - begin));
        size_t middle = late_start(begin, end);
        late.add_run(shape.x.subspan(middle, end - middle), y.subspan(middle, end - middle));
        for (size_t i = begin + 1; i < end; ++i) {
            trend.monotonic = trend.monotonic && y[i] >= y[i - 1];
        }
    }
    trend.slope = all.slope();
    trend.r_squared = all.r_squared();
    trend.late_slope = late.sxx > 0 ? late.slope() : trend.slope;
    return trend;
}

int compare_growth(const Trend& a, const Trend& b) {
    bool a_steady = a.monotonic && a.persistent() > 0;
    bool b_steady = b.monotonic && b.persistent() > 0;
    if (a_steady != b_steady) {
        return a_steady ? -1 : 1;
    }
    if (a.persistent() != b.persistent()) {
        return a.persistent() > b.persistent() ? -1 : 1;
    }
    return 0;
}

} // namespace heapkit
