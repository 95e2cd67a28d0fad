// SPDX-License-Identifier: MIT
// write_growth_pprof (heapkit.hpp): the last dump of a series, its samples carrying their
// stacks' growth as two more sample types.
#include "heapkit/emit/pprof_writer.hpp"
#include "heapkit/emit/stacks/sample_stacks.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/growth/growth.hpp"
#include "heapkit/growth/stack_trends.hpp"
#include "heapkit/util/gzip.hpp"
#include "heapkit/util/try.hpp"

#include <cmath>
#include <cstdlib>
#include <unordered_map>

namespace heapkit {
namespace {

// A stack's rate shared among its samples in proportion to their values, rounded to
// whole units per second (pprof's values are integers).
std::vector<int64_t> shares(const Profile& last, const SampleStacks& spelled,
                            const std::vector<double>& rate_of_stack, SampleType type) {
    std::vector<double> total(spelled.stacks.size(), 0);
    for (size_t s = 0; s < last.samples.size(); ++s) {
        if (uint32_t stack = spelled.stack_of_sample[s]; stack != SampleStacks::none) {
            total[stack] += std::fabs(static_cast<double>(value_of(last.samples[s].values, type)));
        }
    }
    std::vector<int64_t> values(last.samples.size(), 0);
    for (size_t s = 0; s < last.samples.size(); ++s) {
        uint32_t stack = spelled.stack_of_sample[s];
        if (stack == SampleStacks::none || total[stack] == 0) {
            continue;
        }
        double value = std::fabs(static_cast<double>(value_of(last.samples[s].values, type)));
        values[s] = std::llround(rate_of_stack[stack] * value / total[stack]);
    }
    return values;
}

std::vector<std::string> describe(const GrowthSeries& series, SampleType type,
                                  std::string_view per) {
    return {
        fmt::format("growth: the persistent growth of {} per {} over {} dumps in {} run(s): the "
                    "slope over the later half of each run x R^2 of the whole fit",
                    name_of(type), per, series.dumps, series.bounds.size() - 1),
        fmt::format("slope: the least-squares slope of {} per {} (one intercept per run)",
                    name_of(type), per),
        fmt::format("growth and slope are in {} per {} (pprof has no rate units: read its "
                    "figures as per {})",
                    unit_of(type), per, per),
    };
}

} // namespace

Result<std::string> write_growth_pprof(std::span<const Profile> dumps,
                                       const PprofOptions& options) {
    if (dumps.empty()) {
        return fail("growth needs at least 3 dumps; none given");
    }
    FoldedOptions folded;
    folded.sample = options.default_type;
    folded.frames = options.frames;
    folded.thread_frames = !dumps.back().thread_labels.empty();
    HEAPKIT_TRY_ASSIGN(GrowthSeries series, follow_stacks(dumps, folded));
    const Profile& last = dumps[series.last_dump];
    HEAPKIT_TRY_ASSIGN(SampleStacks spelled, spell_sample_stacks(last, folded));
    return catching([&]() -> Result<std::string> {
        std::unordered_map<std::string_view, const StackTrend*> by_stack;
        for (const StackTrend& stack : series.stacks) {
            by_stack.emplace(stack.stack, &stack);
        }
        std::vector<double> growth(spelled.stacks.size(), 0);
        std::vector<double> slope(spelled.stacks.size(), 0);
        for (size_t k = 0; k < spelled.stacks.size(); ++k) {
            if (auto it = by_stack.find(spelled.stacks[k]); it != by_stack.end()) {
                growth[k] = it->second->trend.persistent();
                slope[k] = it->second->trend.slope;
            }
        }
        std::string per = series.timed ? "second" : "dump";
        // pprof knows no rate units: "bytes_per_second" was printed unscaled and glued to
        // the number (6545498bytes_per_second). In bytes (or count) go tool pprof scales
        // them (6.24MB); the comments say they are per second.
        std::string unit(unit_of(folded));
        ExtraSampleType types[] = {
            {"growth", unit, shares(last, spelled, growth, folded.sample)},
            {"slope", unit, shares(last, spelled, slope, folded.sample)},
        };
        PprofOptions with_notes = options;
        for (std::string& line : describe(series, folded.sample, per)) {
            with_notes.comments.push_back(std::move(line));
        }
        for (const std::string& line : series.notes) {
            with_notes.comments.push_back(line);
        }
        return gzip(encode_pprof(last, with_notes, types), options.compress_level);
    });
}

} // namespace heapkit
