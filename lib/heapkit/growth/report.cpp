// SPDX-License-Identifier: MIT
// write_growth_report (heapkit.hpp): the table of leak suspects of a series.
#include "heapkit/emit/quantity.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/growth/allocation_sites.hpp"
#include "heapkit/growth/growth.hpp"
#include "heapkit/growth/stack_trends.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <string_view>
#include <utility>

namespace heapkit {
namespace {

std::string describe_series(const GrowthSeries& series, const FoldedOptions& folded, size_t shown) {
    size_t runs = series.bounds.size() - 1;
    std::string span = series.timed ? fmt::format(" over {:.2f} s", series.seconds.back()) : "";
    size_t growing = growing_count(series);
    size_t steps = step_count(series);
    // Suspects are what grows: a stack that holds the same (or less) is listed only when
    // nothing grows at all. Steps (grew, then stopped) are counted apart: the rows of a
    // series where nothing grows may read "0B -> 1.75MB".
    std::string stepped =
        steps > 0 ? fmt::format(", {} grew and then stopped", steps) : std::string();
    std::string which = growing > 0
                            ? fmt::format("{} grow{}{}", growing, growing == 1 ? "s" : "", stepped)
                            : fmt::format("none grows{}; the largest", stepped);
    return fmt::format("{}: {} dumps in {} run{}{}; {} stacks, {}, {} shown, ranked by growth "
                       "that persists (monotonic first, then the later half's slope x R^2)\n",
                       name_of(folded), series.dumps, runs, runs == 1 ? "" : "s", span,
                       series.stacks.size(), which, shown);
}

// The stacks left out of the table, for the lines under it: a cache that filled and
// stopped is not a suspect, but one may want to know it is there. Steps first (the
// largest steps), then what does not grow (the first as ranked), up to 3 of each.
Result<std::string> left_out(std::span<const Profile> dumps, const FoldedOptions& folded,
                             const GrowthSeries& series, size_t growing) {
    bool bytes = unit_of(folded) == "bytes";
    std::vector<const StackTrend*> steps;
    std::vector<const StackTrend*> flat;
    for (size_t s = growing; s < series.stacks.size(); ++s) {
        (is_step(series.stacks[s]) ? steps : flat).push_back(&series.stacks[s]);
    }
    std::stable_sort(steps.begin(), steps.end(), [](const StackTrend* a, const StackTrend* b) {
        return a->last() - a->first() > b->last() - b->first();
    });
    std::string out;
    for (auto [stacks, which] :
         {std::pair(&steps, "the largest"), std::pair(&flat, "the first as ranked")}) {
        if (stacks->empty()) {
            continue;
        }
        std::vector<StackTrend> named;
        for (size_t s = 0; s < stacks->size() && s < 3; ++s) {
            named.push_back(*(*stacks)[s]);
        }
        HEAPKIT_TRY_ASSIGN(std::vector<std::string> sites, allocation_sites(dumps, folded, named));
        std::string listed;
        for (size_t s = 0; s < named.size(); ++s) {
            listed +=
                fmt::format("{}{} ({} -> {})", s == 0 ? "" : ", ", sites[s],
                            quantity(named[s].first(), bytes), quantity(named[s].last(), bytes));
        }
        bool one = stacks->size() == 1;
        std::string_view verb = stacks == &steps ? "grew and then stopped (steps)"
                                : one            ? "does not grow"
                                                 : "do not grow";
        out += fmt::format("{} stack{} that {} left out; {}: {}\n", stacks->size(), one ? "" : "s",
                           verb, which, listed);
    }
    return out;
}

std::string row(size_t rank, const StackTrend& stack, bool timed, bool bytes,
                const std::string& site) {
    auto rate = [&](double value, bool known) { return known ? quantity(value, bytes) : "-"; };
    return fmt::format("{:>4} {:>11} {:>11} {:>11} {:>5.2f} {:>10} -> {:<10} {:<4} {}\n", rank,
                       rate(stack.trend.persistent(), true), rate(stack.per_second.slope, timed),
                       rate(stack.per_dump.slope, true), stack.trend.r_squared,
                       quantity(stack.first(), bytes), quantity(stack.last(), bytes),
                       stack.trend.monotonic ? "yes" : "no", site);
}

} // namespace

Result<void> write_growth_report(std::span<const Profile> dumps, const FoldedOptions& folded,
                                 const GrowthOptions& options, const Sink& sink) {
    return catching([&]() -> Result<void> {
        HEAPKIT_TRY_ASSIGN(GrowthSeries series, follow_stacks(dumps, folded));
        size_t shown = suspect_count(series, options.node_count);
        std::span<const StackTrend> top(series.stacks.data(), shown);
        HEAPKIT_TRY_ASSIGN(std::vector<std::string> sites, allocation_sites(dumps, folded, top));
        bool bytes = unit_of(folded) == "bytes";
        std::string out = describe_series(series, folded, shown);
        out += fmt::format("{:>4} {:>11} {:>11} {:>11} {:>5} {:>10} -> {:<10} {:<4} {}\n", "rank",
                           series.timed ? "growth/s" : "growth/dump", "slope/s", "slope/dump",
                           "R^2", "first", "last", "mono", "allocated at");
        for (size_t s = 0; s < shown; ++s) {
            out += row(s + 1, top[s], series.timed, bytes, sites[s]);
            out += fmt::format("{:>5}stack: {}\n", "", top[s].stack);
        }
        size_t growing = growing_count(series);
        if (growing > 0 && growing < series.stacks.size()) {
            HEAPKIT_TRY_ASSIGN(std::string rest, left_out(dumps, folded, series, growing));
            out += rest;
        }
        for (const std::string& note : series.notes) {
            out += fmt::format("note: {}\n", note);
        }
        if (!options.note.empty()) {
            out += fmt::format("note: {}\n", options.note);
        }
        return sink(out);
    });
}

} // namespace heapkit
