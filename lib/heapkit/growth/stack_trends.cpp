// SPDX-License-Identifier: MIT
#include "heapkit/growth/stack_trends.hpp"

#include "heapkit/emit/stacks/folded.hpp"
#include "heapkit/emit/stacks/sample_stacks.hpp"
#include "heapkit/growth/series_order.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <unordered_map>

namespace heapkit {
namespace {

constexpr size_t min_dumps = 3;

// Seconds since the first dump, and whether they make an axis.
void place_in_time(std::span<const Profile> dumps, GrowthSeries& series) {
    series.seconds.assign(dumps.size(), 0);
    bool known = std::all_of(dumps.begin(), dumps.end(),
                             [](const Profile& dump) { return dump.time_nanos != 0; });
    if (!known) {
        return;
    }
    for (size_t d = 0; d < dumps.size(); ++d) {
        series.seconds[d] = static_cast<double>(dumps[d].time_nanos - dumps[0].time_nanos) / 1e9;
    }
    series.timed = has_spread(SeriesShape{series.seconds, series.bounds});
}

// How far the ranking's axis reaches within the runs: the time (or dumps) the runs were
// watched, over which a slope adds up. The same for every stack.
double watched(const SeriesShape& shape) {
    double span = 0;
    for (size_t r = 0; r + 1 < shape.bounds.size(); ++r) {
        span += shape.x[shape.bounds[r + 1] - 1] - shape.x[shape.bounds[r]];
    }
    return span;
}

// The smallest change a stack's value made from one dump to the next within a run: the
// grain its values move by (one object's sampled weight or more). 0 when it never moved.
double smallest_step(const std::vector<int64_t>& values, const std::vector<size_t>& bounds) {
    double step = 0;
    for (size_t r = 0; r + 1 < bounds.size(); ++r) {
        for (size_t i = bounds[r] + 1; i < bounds[r + 1]; ++i) {
            double change = std::abs(static_cast<double>(values[i] - values[i - 1]));
            if (change > 0 && (step == 0 || change < step)) {
                step = change;
            }
        }
    }
    return step;
}

// A persistent growth that adds up, over all the runs were watched, to less than the
// smallest step the stack ever took is no growth: a batch buffer of 64 kB that came and
// went got a slope a hair above zero from the dumps' timing alone, and was listed as
// growing by "0B" a second.
void drop_growth_below_one_step(StackTrend& stack, double span, const std::vector<size_t>& bounds) {
    // A run of two dumps that stepped once fits a line that grows by exactly that step:
    // compared with room for the last bits, lest rounding drop it.
    double grown = std::abs(stack.trend.persistent()) * span;
    if (grown < smallest_step(stack.values, bounds) * (1 - 1e-9)) {
        stack.trend.late_slope = 0;
    }
}

// Growth that stopped: the value held still over the last quarter (3 dumps at least) of
// every run long enough to tell (4 dumps), so that what it grew is a step however steep
// the climb before it was. A later half's slope alone still saw the climb: a stack that
// went 0 -> 5.83 MB and then held for 4 dumps was a suspect, one that went 0 -> 116 MB a
// little earlier was said not to grow.
bool stopped(const std::vector<int64_t>& values, const std::vector<size_t>& bounds) {
    bool told = false;
    for (size_t r = 0; r + 1 < bounds.size(); ++r) {
        size_t end = bounds[r + 1];
        size_t length = end - bounds[r];
        if (length < 4) {
            continue;
        }
        size_t tail = std::max<size_t>(3, (length + 3) / 4);
        if (!std::all_of(values.begin() + static_cast<ptrdiff_t>(end - tail),
                         values.begin() + static_cast<ptrdiff_t>(end),
                         [&](int64_t value) { return value == values[end - 1]; })) {
            return false;
        }
        told = true;
    }
    return told;
}

void fit_all(GrowthSeries& series) {
    std::vector<double> numbers(series.dumps);
    for (size_t d = 0; d < series.dumps; ++d) {
        numbers[d] = static_cast<double>(d);
    }
    SeriesShape by_dump{numbers, series.bounds};
    SeriesShape by_second{series.seconds, series.bounds};
    double span = watched(series.timed ? by_second : by_dump);
    std::vector<double> y(series.dumps);
    for (StackTrend& stack : series.stacks) {
        std::transform(stack.values.begin(), stack.values.end(), y.begin(),
                       [](int64_t value) { return static_cast<double>(value); });
        stack.per_dump = fit_trend(by_dump, y);
        if (series.timed) {
            stack.per_second = fit_trend(by_second, y);
        }
        stack.trend = series.timed ? stack.per_second : stack.per_dump;
        drop_growth_below_one_step(stack, span, series.bounds);
        if (stopped(stack.values, series.bounds)) {
            stack.trend.late_slope = 0;
        }
    }
}

void rank(std::vector<StackTrend>& stacks) {
    std::sort(stacks.begin(), stacks.end(), [](const StackTrend& a, const StackTrend& b) {
        if (int order = compare_growth(a.trend, b.trend); order != 0) {
            return order < 0;
        }
        if (a.last() != b.last()) {
            return a.last() > b.last();
        }
        return a.stack < b.stack;
    });
}

// How to name the dumps of one process: the path of its first dump with what follows
// "<prefix>.<pid>." replaced by "*" (jemalloc's names), else that path.
std::string dumps_of(const std::string& first, const ConcurrentProcess& process) {
    if (process.pid) {
        std::string marker = fmt::format(".{}.", *process.pid);
        if (size_t at = first.rfind(marker); at != std::string::npos) {
            return first.substr(0, at + marker.size()) + "*.heap";
        }
    }
    return first;
}

// Processes that ran at the same time are no series: splicing their dumps in time order
// made a stack's 6 MB in one process and 0 in another a "0B -> 0B" line.
Error refuse_concurrent(std::span<const Profile> dumps,
                        const std::vector<ConcurrentProcess>& processes) {
    std::string listed;
    for (const ConcurrentProcess& process : processes) {
        listed += listed.empty() ? "" : "; ";
        std::string who = process.pid ? fmt::format("pid {}", *process.pid)
                                      : fmt::format("the process whose program is loaded at "
                                                    "0x{:x}",
                                                    process.main_start);
        listed += fmt::format("{}: {} dump{} ({})", who, process.dumps.size(),
                              process.dumps.size() == 1 ? "" : "s",
                              dumps_of(dumps[process.dumps.front()].sources.front(), process));
    }
    const ConcurrentProcess& most =
        *std::max_element(processes.begin(), processes.end(),
                          [](const ConcurrentProcess& a, const ConcurrentProcess& b) {
                              return a.dumps.size() < b.dumps.size();
                          });
    return Error{fmt::format(
        "these dumps are of {} processes that ran at the same time, not one after another "
        "({}): growth is followed within one process; give the dumps of one, e.g. --growth {}",
        processes.size(), listed, dumps_of(dumps[most.dumps.front()].sources.front(), most))};
}

// Where growth is read: from the first run of two dumps or more to the last such run.
void find_growth_span(std::span<const Profile> dumps, GrowthSeries& series) {
    const std::vector<size_t>& bounds = series.bounds;
    size_t runs = bounds.size() - 1;
    size_t first_run = 0;
    while (first_run < runs && bounds[first_run + 1] - bounds[first_run] < 2) {
        ++first_run;
    }
    size_t last_run = runs;
    while (last_run > first_run && bounds[last_run] - bounds[last_run - 1] < 2) {
        --last_run;
    }
    if (first_run == runs) { // no run of two dumps: the series' own ends
        series.first_dump = 0;
        series.last_dump = dumps.size() - 1;
        return;
    }
    series.first_dump = bounds[first_run];
    series.last_dump = bounds[last_run] - 1;
    std::vector<std::string> alone;
    for (size_t r = 0; r < runs; ++r) {
        if (r < first_run || r >= last_run) {
            alone.push_back(dumps[bounds[r]].sources.front());
        }
    }
    if (!alone.empty()) {
        series.notes.push_back(fmt::format(
            "{} ({}), which show{} no growth: first -> last and the last dump's views are of "
            "the runs with several dumps (from {} to {})",
            alone.size() == 1 ? "a run of one dump"
                              : fmt::format("{} runs of one dump each", alone.size()),
            fmt::join(alone, ", "), alone.size() == 1 ? "s" : "",
            dumps[series.first_dump].sources.front(), dumps[series.last_dump].sources.front()));
    }
}

bool is_final_dump(std::string_view path) {
    if (path.ends_with(".gz")) {
        path.remove_suffix(3);
    }
    return path.ends_with(".f.heap") && parse_dump_name(path).has_value();
}

// prof_final's dump is written at exit, after the program's static destructors and
// atexit handlers: a program that frees its memory there (named, many C++ programs) ends
// the run at 0, and a leak reads as "8kB -> 0B". Said, not hidden: for a program that
// keeps its memory the final dump is the best point of the series.
void note_final_dumps(std::span<const Profile> dumps, GrowthSeries& series) {
    std::vector<std::string> finals;
    for (size_t r = 0; r + 1 < series.bounds.size(); ++r) {
        size_t first = series.bounds[r];
        size_t last = series.bounds[r + 1] - 1;
        if (last > first && last >= series.first_dump && last <= series.last_dump &&
            is_final_dump(dumps[last].sources.front())) {
            finals.push_back(dumps[last].sources.front());
        }
    }
    if (finals.empty()) {
        return;
    }
    series.notes.push_back(fmt::format(
        "{} with a final dump ({}): jemalloc writes it at exit (prof_final), after the "
        "program's destructors and atexit handlers ran, so what they freed is not in it (a "
        "leak freed at exit reads as falling to 0 there); to follow what the process held "
        "while it ran, give the series without it",
        finals.size() == 1 ? "the run ends" : fmt::format("{} runs end each", finals.size()),
        fmt::join(finals, ", ")));
}

} // namespace

size_t growing_count(const GrowthSeries& series) {
    // compare_growth ranks every stack that grows before every one that does not.
    auto grows = [](const StackTrend& stack) { return stack.trend.persistent() > 0; };
    return static_cast<size_t>(std::find_if_not(series.stacks.begin(), series.stacks.end(), grows) -
                               series.stacks.begin());
}

bool is_step(const StackTrend& stack) {
    return stack.trend.persistent() <= 0 && stack.last() > stack.first();
}

size_t step_count(const GrowthSeries& series) {
    return static_cast<size_t>(std::count_if(series.stacks.begin(), series.stacks.end(), is_step));
}

size_t suspect_count(const GrowthSeries& series, size_t wanted) {
    size_t bound = wanted == 0 ? series.stacks.size() : wanted;
    size_t growing = growing_count(series);
    return std::min(bound, growing > 0 ? growing : series.stacks.size());
}

Result<GrowthSeries> follow_stacks(std::span<const Profile> dumps, const FoldedOptions& folded) {
    if (dumps.size() < min_dumps) {
        return fail("growth needs at least {} dumps; {} given", min_dumps, dumps.size());
    }
    return catching([&]() -> Result<GrowthSeries> {
        GrowthSeries series;
        series.dumps = dumps.size();
        std::vector<DumpStamp> stamps;
        for (const Profile& dump : dumps) {
            stamps.push_back(stamp_of(dump));
        }
        series.bounds = run_bounds(stamps);
        if (series.bounds.size() - 1 == dumps.size()) {
            return fail("growth is measured within a run, and each of these {} dumps is of "
                        "another run (their pids or the program's load addresses differ): "
                        "give several dumps of one run",
                        dumps.size());
        }
        if (auto processes = concurrent_processes(stamps, series.bounds); !processes.empty()) {
            return tl::unexpected(refuse_concurrent(dumps, processes));
        }
        place_in_time(dumps, series);
        std::unordered_map<std::string, size_t> index;
        for (size_t d = 0; d < dumps.size(); ++d) {
            HEAPKIT_TRY(fold_stacks(dumps[d], folded, [&](const FoldedStack& line) {
                auto [it, added] =
                    index.try_emplace(std::string(line.frames), series.stacks.size());
                if (added) {
                    StackTrend stack;
                    stack.stack = it->first;
                    stack.values.resize(dumps.size());
                    series.stacks.push_back(std::move(stack));
                }
                series.stacks[it->second].values[d] += line.value;
                return Result<void>{};
            }));
        }
        find_growth_span(dumps, series);
        note_final_dumps(dumps, series);
        for (StackTrend& stack : series.stacks) {
            stack.first_value = stack.values[series.first_dump];
            stack.last_value = stack.values[series.last_dump];
        }
        fit_all(series);
        rank(series.stacks);
        return series;
    });
}

} // namespace heapkit
