// SPDX-License-Identifier: MIT
// write_lifetime_chart (writers.hpp): how long the objects of an allocation log lived, as
// one histogram per site (the table's sites, in its order) above one for all of them.
// Lifetimes span nanoseconds to minutes, so the buckets are logarithmic: four per decade
// from 100 ns to 100 s, with a labelled column on each side for what is shorter or longer.
// Each row is scaled to its own tallest bar, as its shape (when its objects die) is the
// point, not its size: its objects and its tallest bar's count are written under its name.
#include "heapkit/emit/flame/labels.hpp"
#include "heapkit/emit/log_sites.hpp"
#include "heapkit/emit/quantity.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/util/try.hpp"
#include "heapkit/util/xml.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace heapkit {
namespace {

constexpr int first_decade = 2; // 10^2 ns = 100 ns
constexpr int decades = 9;      // up to 10^11 ns = 100 s
constexpr int per_decade = 4;
constexpr int scaled_buckets = decades * per_decade;
// Column 0: under 100 ns; then the log-scale buckets; the last: 100 s or more.
constexpr int bucket_count = scaled_buckets + 2;
constexpr int longer = bucket_count - 1;
constexpr double left = 260; // the site names' column, px
constexpr double right = 20; // margin, px
constexpr double row_height = 60;
constexpr double bar_area = 40;               // of a row: the bars' height at most
constexpr double site_char_width = 11 * 0.59; // px per character of an 11 px site name

using Buckets = std::array<double, bucket_count>;

int bucket_of(uint64_t nanos) {
    if (nanos < 100) {
        return 0;
    }
    double position = (std::log10(static_cast<double>(nanos)) - first_decade) * per_decade;
    return std::min(static_cast<int>(std::floor(position)), scaled_buckets) + 1;
}

// Where log-scale bucket `b` (1 to scaled_buckets + 1) begins, ns.
double bucket_start(int b) {
    return std::pow(10.0, first_decade + static_cast<double>(b - 1) / per_decade);
}

std::string duration(double nanos) {
    if (nanos < 1e3) {
        return fmt::format("{:.0f}ns", nanos);
    }
    if (nanos < 1e6) {
        return fmt::format("{:.3g}us", nanos / 1e3);
    }
    if (nanos < 1e9) {
        return fmt::format("{:.3g}ms", nanos / 1e6);
    }
    return fmt::format("{:.3g}s", nanos / 1e9);
}

// "lived 1ms to 1.78ms", and the two open-ended columns.
std::string lived(int b) {
    if (b == 0) {
        return "lived under " + duration(bucket_start(1));
    }
    if (b == longer) {
        return fmt::format("lived {} or more", duration(bucket_start(longer)));
    }
    return fmt::format("lived {} to {}", duration(bucket_start(b)), duration(bucket_start(b + 1)));
}

Buckets histogram(const std::vector<Lifetime>& lifetimes) {
    Buckets counts{};
    for (const Lifetime& lifetime : lifetimes) {
        counts[static_cast<size_t>(bucket_of(lifetime.nanos))] += lifetime.weight;
    }
    return counts;
}

struct ChartFrame {
    double width;
    double bar_width;
    double x(double position) const { return left + position * bar_width; }
};

void draw_row(std::string& out, const ChartFrame& frame, double top, std::string_view name,
              const Buckets& counts, std::string_view colour) {
    double tallest = *std::max_element(counts.begin(), counts.end());
    double total = 0;
    for (double count : counts) {
        total += count;
    }
    // Cut to the names' column, as a flame graph cuts its labels (a C++ site's name runs
    // past the chart's left edge otherwise); the whole name is the label's tooltip.
    fmt::format_to(std::back_inserter(out),
                   "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"site\"><title>{}"
                   "</title>{}</text>\n",
                   left - 8, top + bar_area - 4, escape_xml(name),
                   escape_xml(fitted_label(name, (left - 16) / site_char_width)));
    fmt::format_to(std::back_inserter(out),
                   "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" class=\"count\">{} object{}, "
                   "tallest bar {}</text>\n",
                   left - 8, top + bar_area + 11,
                   with_thousands(static_cast<uint64_t>(std::llround(total))),
                   std::llround(total) == 1 ? "" : "s",
                   with_thousands(static_cast<uint64_t>(std::llround(tallest))));
    fmt::format_to(std::back_inserter(out),
                   "<line x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"base\"/>\n",
                   left, frame.width - right, top + bar_area, top + bar_area);
    for (int b = 0; b < bucket_count; ++b) {
        double count = counts[static_cast<size_t>(b)];
        if (count <= 0 || tallest <= 0) {
            continue;
        }
        double height = std::max(1.0, bar_area * count / tallest);
        fmt::format_to(
            std::back_inserter(out),
            "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\">"
            "<title>{}: {} objects {} ({:.1f}%)</title></rect>\n",
            frame.x(b) + 0.5, top + bar_area - height, frame.bar_width - 1, height, colour,
            escape_xml(name), with_thousands(static_cast<uint64_t>(std::llround(count))), lived(b),
            100 * count / total);
    }
}

void draw_axis(std::string& out, const ChartFrame& frame, double top, double bottom) {
    for (int d = 0; d <= decades; ++d) {
        double x = frame.x(1 + d * per_decade);
        fmt::format_to(std::back_inserter(out),
                       "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
                       "class=\"grid\"/>\n<text x=\"{0:.1f}\" y=\"{3:.1f}\" "
                       "text-anchor=\"middle\">{4}</text>\n",
                       x, top, bottom, bottom + 16, duration(bucket_start(1 + d * per_decade)));
    }
    // The open-ended columns, named on a line of their own (their edges' labels are taken).
    for (auto [column, label] : {std::pair{0, "<100ns"}, std::pair{longer, "\u2265100s"}}) {
        fmt::format_to(std::back_inserter(out),
                       "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
                       "class=\"open\"/>\n<text x=\"{:.1f}\" y=\"{:.1f}\" "
                       "text-anchor=\"middle\" class=\"open-label\">{}</text>\n",
                       frame.x(column), top, frame.bar_width, bottom - top, frame.x(column + 0.5),
                       bottom + 30, escape_xml(label));
    }
    // The axis's title, between the open-ended columns' names.
    fmt::format_to(
        std::back_inserter(out),
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" class=\"axis-title\">"
        "lifetime, from allocation to free (logarithmic: four columns a decade)</text>\n",
        (frame.x(0) + frame.x(longer + 1)) / 2, bottom + 30);
    // The table's limits: 1 ms ("temporary"), 10 ms, 1 s.
    for (int exponent : {6, 7, 9}) {
        double x = frame.x(1 + (exponent - first_decade) * per_decade);
        fmt::format_to(std::back_inserter(out),
                       "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" "
                       "class=\"limit\"/>\n",
                       x, top, bottom);
    }
}

} // namespace

Result<void> write_lifetime_chart(const Profile& profile, const FoldedOptions& folded,
                                  const LifetimeOptions& options, const Sink& sink) {
    if (!profile.from_log) {
        return fail("a lifetime chart needs jemalloc's allocation log (prof_log), which "
                    "records when each object was freed; a dump does not");
    }
    return catching([&]() -> Result<void> {
        HEAPKIT_TRY_ASSIGN(std::vector<LogSite> sites, sites_of(profile, folded));
        size_t shown =
            std::min(options.site_count == 0 ? sites.size() : options.site_count, sites.size());
        Buckets all{};
        for (const LogSite& site : sites) {
            Buckets counts = histogram(site.lifetimes);
            for (size_t b = 0; b < all.size(); ++b) {
                all[b] += counts[b];
            }
        }
        auto width = static_cast<double>(std::max(options.width, 600u));
        ChartFrame frame{width, (width - left - right) / bucket_count};
        const std::string& note = profile.log_window_note;
        double top = note.empty() ? 66 : 90; // room for the note's two lines
        double height = top + row_height * static_cast<double>(shown + 1) + 50;
        std::string out = fmt::format(
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} "
            "{1:.0f}\" xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<style>text {{ font-family: Verdana, sans-serif; font-size: 12px; fill: #222; }} "
            ".site {{ font-size: 11px; }} .grid {{ stroke: #ddd; }} .base {{ stroke: #999; }} "
            ".limit {{ stroke: #c33; stroke-dasharray: 4 3; }} .count {{ font-size: 10px; "
            "fill: #666; }} .open {{ fill: #eef; }} .open-label {{ font-size: 11px; }} .axis-title "
            "{{ font-size: 12px; fill: #444; }} "
            ".note {{ font-size: 11px; fill: #555; }}</style>\n"
            "<rect width=\"100%\" height=\"100%\" fill=\"#fdfdfd\"/>\n"
            "<text x=\"{2:.1f}\" y=\"24\" text-anchor=\"middle\" style=\"font-size:16px\">{3}"
            "</text>\n",
            width, height, width / 2,
            escape_xml(fmt::format("Lifetimes of objects freed in {:.3g} s, unsampled, per {} "
                                   "site by {} (red lines: 1 ms, 10 ms, 1 s)",
                                   static_cast<double>(profile.duration_nanos) / 1e9,
                                   profile.log_free_sites ? "freeing" : "allocating",
                                   name_of(folded))));
        if (!note.empty()) { // under the title, in two lines at its colon
            size_t colon = note.find("): ");
            size_t cut = colon == std::string::npos ? note.size() : colon + 2;
            for (auto [y, line] : {std::pair{40, std::string_view(note).substr(0, cut)},
                                   std::pair{54, std::string_view(note).substr(cut)}}) {
                out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" "
                                   "style=\"font-size:11px\">{}</text>\n",
                                   width / 2, y, escape_xml(std::string(line)));
            }
        }
        out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" class=\"note\">"
                           "Each row is scaled to its own tallest bar: compare shapes, not "
                           "heights (each row's objects and tallest bar are under its name). "
                           "Shaded columns: under 100 ns and 100 s or more.</text>\n",
                           width / 2, note.empty() ? 44 : 70);
        double bottom = top + row_height * static_cast<double>(shown + 1);
        draw_axis(out, frame, top - 6, bottom - row_height + bar_area + 4);
        draw_row(out, frame, top, "all sites", all, "#555");
        for (size_t s = 0; s < shown; ++s) {
            draw_row(out, frame, top + row_height * static_cast<double>(s + 1), sites[s].name,
                     histogram(sites[s].lifetimes), "#d9822b");
        }
        out += "</svg>\n";
        return sink(out);
    });
}

} // namespace heapkit
