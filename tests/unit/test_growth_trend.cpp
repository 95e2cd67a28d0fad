// SPDX-License-Identifier: MIT
#include "heapkit/growth/trend.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <numeric>
#include <vector>

using namespace heapkit;

namespace {

std::vector<double> numbers(size_t count) {
    std::vector<double> x(count);
    std::iota(x.begin(), x.end(), 0.0);
    return x;
}

Trend fit(const std::vector<double>& y, std::vector<size_t> bounds = {}) {
    static std::vector<double> x;
    x = numbers(y.size());
    if (bounds.empty()) {
        bounds = {0, y.size()};
    }
    return fit_trend(SeriesShape{x, bounds}, y);
}

// The synthetic series of tests/fixtures/leaky.c, one value per iteration.
std::vector<double> leak(size_t n) {
    std::vector<double> y;
    for (size_t i = 0; i < n; ++i) {
        y.push_back(8192.0 * static_cast<double>(i + 1));
    }
    return y;
}
std::vector<double> cache(size_t n) {
    std::vector<double> y;
    for (size_t i = 0; i < n; ++i) {
        y.push_back(131072.0 * static_cast<double>(std::min<size_t>(i + 1, 8)));
    }
    return y;
}
std::vector<double> batch(size_t n) {
    std::vector<double> y;
    for (size_t i = 0; i < n; ++i) {
        y.push_back(i % 4 == 3 ? 0 : 65536.0 * static_cast<double>(1 << (i % 4)));
    }
    return y;
}

} // namespace

TEST_CASE("heapkit::fit_trend on an exact line") {
    Trend trend = fit({5, 8, 11, 14, 17, 20, 23, 26, 29, 32});
    CHECK(trend.slope == doctest::Approx(3));
    CHECK(trend.r_squared == doctest::Approx(1));
    CHECK(trend.late_slope == doctest::Approx(3));
    CHECK(trend.persistent() == doctest::Approx(3));
    CHECK(trend.monotonic);
}

TEST_CASE("heapkit::fit_trend computes least squares and R^2 by the textbook") {
    // x 0..3, y 1 3 2 5: Sxy 5.5, Sxx 5, Syy 8.75; the later half is (2, 2), (3, 5).
    Trend trend = fit({1, 3, 2, 5});
    CHECK(trend.slope == doctest::Approx(1.1));
    CHECK(trend.r_squared == doctest::Approx(5.5 * 5.5 / (5 * 8.75)));
    CHECK(trend.late_slope == doctest::Approx(3));
    CHECK_FALSE(trend.monotonic);
}

TEST_CASE("heapkit::fit_trend of a constant or falling value") {
    Trend flat = fit({7, 7, 7, 7});
    CHECK(flat.slope == 0);
    CHECK(flat.r_squared == 0);
    CHECK(flat.persistent() == 0);
    CHECK(flat.monotonic);
    Trend falling = fit({9, 7, 5, 3});
    CHECK(falling.slope == doctest::Approx(-2));
    CHECK(falling.r_squared == doctest::Approx(1));
    CHECK(falling.persistent() < 0);
    CHECK_FALSE(falling.monotonic);
    CHECK(compare_growth(flat, falling) < 0);
}

TEST_CASE("heapkit::fit_trend gives each run its own intercept") {
    // Two runs of a leak: each starts from little again, the slope is the same.
    std::vector<double> y = leak(10);
    std::vector<double> second = leak(10);
    y.insert(y.end(), second.begin(), second.end());
    Trend runs = fit(y, {0, 10, 20});
    CHECK(runs.slope == doctest::Approx(8192));
    CHECK(runs.r_squared == doctest::Approx(1));
    CHECK(runs.monotonic);
    // Read as one run, the drop at the restart spoils it.
    Trend joined = fit(y);
    CHECK(joined.r_squared < 0.5);
    CHECK_FALSE(joined.monotonic);
    // A run of one point says nothing of the slope.
    CHECK(fit({100, 1, 2, 3}, {0, 1, 4}).slope == doctest::Approx(1));
}

TEST_CASE("heapkit::fit_trend over seconds with ties in time") {
    std::vector<double> x{0, 0.5, 0.5, 1.0, 1.5, 2.0};
    std::vector<double> y{0, 10, 10, 20, 30, 40};
    std::vector<size_t> bounds{0, x.size()};
    Trend trend = fit_trend(SeriesShape{x, bounds}, y);
    CHECK(trend.slope == doctest::Approx(20));
    CHECK(has_spread(SeriesShape{x, bounds}));
    std::vector<double> same(4, 1.5);
    std::vector<size_t> two_runs{0, 2, 4};
    CHECK_FALSE(has_spread(SeriesShape{same, two_runs}));
}

TEST_CASE("heapkit::compare_growth ranks a leak above a cache and a batch") {
    for (size_t n : {16, 20, 40}) {
        CAPTURE(n);
        Trend steady = fit(leak(n));
        Trend filled = fit(cache(n));
        Trend batched = fit(batch(n));
        // The cache's slope over the whole series is larger than the leak's...
        CHECK(filled.slope > steady.slope);
        // ...but it stopped growing: no late slope.
        CHECK(filled.late_slope == doctest::Approx(0));
        CHECK(compare_growth(steady, filled) < 0);
        CHECK(compare_growth(filled, steady) > 0);
        CHECK_FALSE(batched.monotonic);
        CHECK(compare_growth(steady, batched) < 0);
        CHECK(compare_growth(steady, steady) == 0);
    }
}

TEST_CASE("heapkit::compare_growth puts growth that never fell first") {
    Trend small_steady = fit({1, 2, 3, 4, 5, 6});
    Trend large_jagged = fit({0, 100, 50, 150, 100, 200});
    REQUIRE(large_jagged.persistent() > small_steady.persistent());
    CHECK(compare_growth(small_steady, large_jagged) < 0);
    // Among monotonic ones, by persistent growth.
    CHECK(compare_growth(fit({1, 3, 5, 7, 9, 11}), small_steady) < 0);
    // A monotonic value that does not grow is no suspect ahead of jagged growth.
    CHECK(compare_growth(large_jagged, fit({4, 4, 4, 4})) < 0);
}
