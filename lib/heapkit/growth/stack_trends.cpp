// SPDX-License-Identifier: MIT
#include "heapkit/growth/stack_trends.hpp"

#include "heapkit/emit/writers.hpp"
#include "heapkit/growth/series_order.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <unordered_map>

namespace heapkit {
namespace {

constexpr size_t min_dumps = 3;

struct FoldedLine {
    std::string_view stack;
    int64_t value = 0;
};

// write_folded's lines: "stack VALUE".
std::vector<FoldedLine> lines_of(std::string_view text) {
    std::vector<FoldedLine> lines;
    while (!text.empty()) {
        size_t end = std::min(text.find('\n'), text.size());
        std::string_view line = text.substr(0, end);
        text.remove_prefix(std::min(end + 1, text.size()));
        size_t space = line.rfind(' ');
        FoldedLine parsed{line.substr(0, space == std::string_view::npos ? 0 : space)};
        std::string_view digits = line.substr(space + 1);
        std::from_chars(digits.data(), digits.data() + digits.size(), parsed.value);
        lines.push_back(parsed);
    }
    return lines;
}

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

void fit_all(GrowthSeries& series) {
    std::vector<double> numbers(series.dumps);
    for (size_t d = 0; d < series.dumps; ++d) {
        numbers[d] = static_cast<double>(d);
    }
    SeriesShape by_dump{numbers, series.bounds};
    SeriesShape by_second{series.seconds, series.bounds};
    std::vector<double> y(series.dumps);
    for (StackTrend& stack : series.stacks) {
        std::transform(stack.values.begin(), stack.values.end(), y.begin(),
                       [](int64_t value) { return static_cast<double>(value); });
        stack.per_dump = fit_trend(by_dump, y);
        if (series.timed) {
            stack.per_second = fit_trend(by_second, y);
        }
        stack.trend = series.timed ? stack.per_second : stack.per_dump;
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

// "name (file.c:12)" -> "name"; "name (file.c:12)_[i]" -> "name_[i]"; else unchanged.
std::string without_line(std::string_view frame) {
    std::string_view mark;
    if (frame.size() > 4 && frame.substr(frame.size() - 4) == "_[i]") {
        mark = frame.substr(frame.size() - 4);
        frame.remove_suffix(4);
    }
    size_t open = frame.rfind(" (");
    size_t colon = frame.rfind(':');
    bool spelled = !frame.empty() && frame.back() == ')' && open != std::string_view::npos &&
                   colon != std::string_view::npos && colon > open && colon + 2 < frame.size() &&
                   std::all_of(frame.begin() + static_cast<ptrdiff_t>(colon) + 1, frame.end() - 1,
                               [](char c) { return c >= '0' && c <= '9'; });
    return std::string(spelled ? frame.substr(0, open) : frame).append(mark);
}

// A function_line stack spelled as the function style spells it.
std::string without_lines(std::string_view stack) {
    std::string plain;
    while (true) {
        size_t semicolon = stack.find(';');
        plain += without_line(stack.substr(0, semicolon));
        if (semicolon == std::string_view::npos) {
            return plain;
        }
        plain += ';';
        stack.remove_prefix(semicolon + 1);
    }
}

} // namespace

std::string_view leaf_of(std::string_view stack) {
    size_t semicolon = stack.rfind(';');
    return semicolon == std::string_view::npos ? stack : stack.substr(semicolon + 1);
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
        place_in_time(dumps, series);
        std::unordered_map<std::string, size_t> index;
        for (size_t d = 0; d < dumps.size(); ++d) {
            HEAPKIT_TRY_ASSIGN(std::string text, write_folded(dumps[d], folded));
            for (const FoldedLine& line : lines_of(text)) {
                auto [it, added] = index.try_emplace(std::string(line.stack), series.stacks.size());
                if (added) {
                    StackTrend stack;
                    stack.stack = it->first;
                    stack.values.resize(dumps.size());
                    series.stacks.push_back(std::move(stack));
                }
                series.stacks[it->second].values[d] += line.value;
            }
        }
        fit_all(series);
        rank(series.stacks);
        return series;
    });
}

Result<std::vector<std::string>> allocation_sites(std::span<const Profile> dumps,
                                                  const FoldedOptions& folded,
                                                  std::span<const StackTrend> stacks) {
    std::vector<std::string> sites;
    for (const StackTrend& stack : stacks) {
        sites.emplace_back(leaf_of(stack.stack));
    }
    if (folded.style != FrameStyle::function) {
        return sites; // lines are spelled already, or there are none to spell
    }
    return catching([&]() -> Result<std::vector<std::string>> {
        // Each dump spelled once, the newest first, for the stacks it is the last to hold.
        FoldedOptions with_lines = folded;
        with_lines.style = FrameStyle::function_line;
        for (size_t d = dumps.size(); d-- > 0;) {
            std::unordered_map<std::string_view, size_t> wanted;
            for (size_t s = 0; s < stacks.size(); ++s) {
                auto holds = [&](int64_t v) { return v != 0; };
                auto last = std::find_if(stacks[s].values.rbegin(), stacks[s].values.rend(), holds);
                if (last != stacks[s].values.rend() &&
                    static_cast<size_t>(stacks[s].values.rend() - last) - 1 == d) {
                    wanted.emplace(stacks[s].stack, s);
                }
            }
            if (wanted.empty()) {
                continue;
            }
            HEAPKIT_TRY_ASSIGN(std::string text, write_folded(dumps[d], with_lines));
            // Lines of one function part by line there: the site holding the most wins.
            std::vector<int64_t> best(stacks.size(), 0);
            for (const FoldedLine& line : lines_of(text)) {
                auto it = wanted.find(without_lines(line.stack));
                if (it != wanted.end() && std::abs(line.value) > best[it->second]) {
                    best[it->second] = std::abs(line.value);
                    sites[it->second] = std::string(leaf_of(line.stack));
                }
            }
        }
        return sites;
    });
}

} // namespace heapkit
