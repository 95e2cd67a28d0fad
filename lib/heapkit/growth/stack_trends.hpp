// SPDX-License-Identifier: MIT
// Every stack of a series followed through its dumps, its trend fitted, ranked.
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/growth/trend.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace heapkit {

struct StackTrend {
    std::string stack;           // as write_folded spells it: root first, ';' between frames
    std::vector<int64_t> values; // per dump, oldest first; 0 where the dump lacks it
    Trend trend;                 // over the series' axis (GrowthSeries::timed); no late
                                 // slope when the growth it makes over the runs is less
                                 // than the smallest step the values took
    Trend per_dump;              // over dump numbers, whatever the axis
    Trend per_second;            // over seconds; all zero when the series is not timed

    // Its value in the series' first and last dump of growth (GrowthSeries::first_dump,
    // last_dump).
    int64_t first_value = 0;
    int64_t last_value = 0;

    int64_t first() const { return first_value; }
    int64_t last() const { return last_value; }
};

struct GrowthSeries {
    size_t dumps = 0;
    std::vector<double> seconds; // per dump, since the first one; 0s when not timed
    std::vector<size_t> bounds;  // runs, as SeriesShape::bounds
    // Slopes are per second: every dump's time is known and they differ within some run.
    bool timed = false;
    std::vector<StackTrend> stacks; // ranked: the strongest suspect first
    // The dumps "first -> last" and the views of the last dump are of (indexes): the first
    // and last dump of the runs of two dumps or more. A run of one dump shows no growth:
    // at either end of a series (varnish's manager's final dump after its child's series)
    // it must not stand for the run that grew. The series' own ends when no run has two.
    size_t first_dump = 0;
    size_t last_dump = 0;
    // What a reader of the series should know, one sentence each: runs of one dump set
    // aside, runs that end in a final dump (prof_final: written at exit, after the
    // program's destructors).
    std::vector<std::string> notes;
};

// Spells every dump with write_folded (`folded`), fits each stack's values, and ranks the
// stacks (compare_growth, then the larger last value, then the stack bytewise). An error
// for fewer than 3 dumps.
Result<GrowthSeries> follow_stacks(std::span<const Profile> dumps, const FoldedOptions& folded);

// How many of the ranked stacks a view shows as suspects: those that grow (persistent
// growth above 0, a prefix of the ranking), at most `wanted` (0: no bound); when none
// grows, the first `wanted` as ranked, so that a view still shows what is largest.
size_t suspect_count(const GrowthSeries& series, size_t wanted);

// How many of the stacks grow (persistent growth above 0).
size_t growing_count(const GrowthSeries& series);

// A step: a stack that grew over the series (its last value above its first) and then
// stopped (no persistent growth): a cache that filled, a pool made once. Neither a suspect
// nor a stack that "does not grow".
bool is_step(const StackTrend& stack);

// How many of the stacks are steps.
size_t step_count(const GrowthSeries& series);

} // namespace heapkit
