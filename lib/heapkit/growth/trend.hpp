// SPDX-License-Identifier: MIT
// How one value moves over a series of dumps: a least-squares line, how well it fits,
// and whether the growth persists. Numbers only: nothing here knows of stacks or dumps.
#pragma once

#include <cstddef>
#include <span>

namespace heapkit {

// A series of points (x ascending within each run) cut into runs of one program: a run
// is one process, and a value of one process says nothing of the next one's (it starts
// from nothing again). bounds = {0, b1, ..., n}: run r holds the points [bounds[r],
// bounds[r + 1]).
struct SeriesShape {
    std::span<const double> x;      // seconds, or dump numbers
    std::span<const size_t> bounds; // at least {0, x.size()}
};

// A line fitted to one value's points, every run with its own intercept and all with one
// slope (least squares "within" runs; with one run, the ordinary fit).
struct Trend {
    double slope = 0;      // y per x, over every point
    double r_squared = 0;  // the share of y's variance within runs the line explains; 0
                           // when y is constant (a line explains nothing there)
    double late_slope = 0; // the slope over the later half of each run's points (the
                           // whole slope when the later halves hold no two distinct x)
    bool monotonic = true; // y never falls within a run

    // Growth that persists: the later half's slope, weighted by how well one line fits
    // the whole series. A steady leak keeps its slope (R^2 near 1); a cache that filled
    // and then stayed flat has no late slope; a batch that rises and falls back fits a
    // line poorly.
    double persistent() const { return late_slope * r_squared; }
};

// The trend of `y` (one value per x) over `shape`. A run of one point adds nothing to the
// slope; with no two distinct x within any run, the slope is 0.
Trend fit_trend(const SeriesShape& shape, std::span<const double> y);

// True when the shape allows a slope: some run has two points with distinct x.
bool has_spread(const SeriesShape& shape);

// The ranking of suspects, a strict weak order: growth that never fell (monotonic with a
// positive persistent growth) first, then by persistent growth, largest first. Ties are
// left to the caller.
int compare_growth(const Trend& a, const Trend& b);

} // namespace heapkit
