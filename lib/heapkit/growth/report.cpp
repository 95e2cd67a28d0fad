// SPDX-License-Identifier: MIT
// write_growth_report (heapkit.hpp): the table of leak suspects of a series.
#include "heapkit/emit/quantity.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/growth/growth.hpp"
#include "heapkit/growth/stack_trends.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace heapkit {
namespace {

std::string describe_series(const GrowthSeries& series, const FoldedOptions& folded, size_t shown) {
    size_t runs = series.bounds.size() - 1;
    std::string span = series.timed ? fmt::format(" over {:.2f} s", series.seconds.back()) : "";
    size_t growing = growing_count(series);
    // Suspects are what grows: a stack that holds the same (or less) is listed only when
    // nothing grows at all.
    std::string which = growing > 0 ? fmt::format("{} grow{}", growing, growing == 1 ? "s" : "")
                                    : "none grows, the largest";
    return fmt::format("{}: {} dumps in {} run{}{}; {} stacks, {}, {} shown, ranked by growth "
                       "that persists (monotonic first, then the later half's slope x R^2)\n",
                       name_of(folded.sample), series.dumps, runs, runs == 1 ? "" : "s", span,
                       series.stacks.size(), which, shown);
}

// The largest of the stacks that do not grow, for the line under the table: a cache that
// filled and stopped is not a suspect, but one may want to know it is there.
std::string left_out(const GrowthSeries& series, std::span<const std::string> sites_of_rest,
                     bool bytes) {
    size_t growing = growing_count(series);
    std::string named;
    for (size_t s = 0; s < sites_of_rest.size(); ++s) {
        const StackTrend& stack = series.stacks[growing + s];
        named += fmt::format("{}{} ({} -> {})", s == 0 ? "" : ", ", sites_of_rest[s],
                             quantity(stack.first(), bytes), quantity(stack.last(), bytes));
    }
    return fmt::format("{} stack{} that do{} not grow left out; the first as ranked: {}\n",
                       series.stacks.size() - growing,
                       series.stacks.size() - growing == 1 ? "" : "s",
                       series.stacks.size() - growing == 1 ? "es" : "", named);
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
        bool bytes = unit_of(folded.sample) == "bytes";
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
            std::span<const StackTrend> rest(series.stacks.data() + growing,
                                             std::min<size_t>(3, series.stacks.size() - growing));
            HEAPKIT_TRY_ASSIGN(std::vector<std::string> rest_sites,
                               allocation_sites(dumps, folded, rest));
            out += left_out(series, rest_sites, bytes);
        }
        for (const std::string& note : series.notes) {
            out += fmt::format("note: {}\n", note);
        }
        return sink(out);
    });
}

} // namespace heapkit
