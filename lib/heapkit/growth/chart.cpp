// SPDX-License-Identifier: MIT
#include "heapkit/growth/chart.hpp"

#include "heapkit/emit/quantity.hpp"
#include "heapkit/util/xml.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <vector>

namespace heapkit {
namespace {

// Layout, in pixels.
constexpr double left_pad = 90;  // room for the values' labels
constexpr double right_pad = 24; //
constexpr double plot_top = 48;  // below the title
constexpr double plot_height = 260;
constexpr double axis_room = 44;   // below the plot: tick labels and the axis' name
constexpr double legend_line = 18; // one legend entry

// Colours far apart from one another, for lines that cross.
constexpr std::array<const char*, 10> line_colors{
    "rgb(204,37,41)", "rgb(57,106,177)", "rgb(62,150,81)",  "rgb(218,124,48)", "rgb(107,76,154)",
    "rgb(0,150,160)", "rgb(146,36,40)",  "rgb(200,80,160)", "rgb(83,81,84)",   "rgb(148,139,61)",
};

// A round step that cuts `span` into at most about `parts`: 1, 2 or 5 times a power of ten,
// or for bytes a power of two (so that labels read 256kB, 1MB).
double tick_step(double span, int parts, bool binary) {
    double rough = std::max(span, 1e-9) / parts;
    if (binary && rough >= 1) {
        return std::exp2(std::ceil(std::log2(rough)));
    }
    double power = std::pow(10, std::floor(std::log10(rough)));
    for (double factor : {1.0, 2.0, 5.0, 10.0}) {
        if (factor * power >= rough) {
            return factor * power;
        }
    }
    return 10 * power;
}

// "0", "512B", "256kB", "1.5MB": no trailing zeros on the axis.
std::string byte_label(double value) {
    constexpr const char* units[] = {"B", "kB", "MB", "GB", "TB"};
    size_t unit = 0;
    double magnitude = std::fabs(value);
    while (magnitude >= 1024 && unit + 1 < std::size(units)) {
        magnitude /= 1024;
        ++unit;
    }
    return value == 0 ? "0" : fmt::format("{}{:g}{}", value < 0 ? "-" : "", magnitude, units[unit]);
}

// The multiples of `step` from `from` to `to`, each computed anew (no drift from adding).
std::vector<double> ticks(double from, double to, double step) {
    std::vector<double> values;
    for (double i = std::ceil(from / step); i * step <= to + step * 1e-9; ++i) {
        values.push_back(i * step);
    }
    return values;
}

struct Scale {
    double from;
    double to;
    double pixel_from;
    double pixel_to;

    double operator()(double value) const {
        double span = to - from;
        return pixel_from + (span == 0 ? 0 : (value - from) / span * (pixel_to - pixel_from));
    }
};

void write_axes(std::string& out, const ChartInput& input, const Scale& x, const Scale& y,
                double y_step) {
    out += "<g id=\"growth-axes\" stroke=\"rgb(120,120,120)\">\n";
    fmt::format_to(std::back_inserter(out),
                   "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
                   "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{3}\"/>\n",
                   x.pixel_from, y.pixel_from, x.pixel_to, y.pixel_to);
    for (double v : ticks(y.from, y.to, y_step)) {
        fmt::format_to(std::back_inserter(out),
                       "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" "
                       "stroke=\"rgb(225,225,225)\"/><text x=\"{3}\" y=\"{4:.1f}\" "
                       "text-anchor=\"end\" stroke=\"none\">{5}</text>\n",
                       x.pixel_from, y(v), x.pixel_to, x.pixel_from - 6, y(v) + 4,
                       input.bytes ? byte_label(v) : fmt::format("{:g}", v));
    }
    double x_step = tick_step(x.to - x.from, 10, false);
    if (!input.seconds) {
        x_step = std::max(1.0, x_step); // dump numbers are whole
    }
    for (double v : ticks(x.from, x.to, x_step)) {
        fmt::format_to(
            std::back_inserter(out),
            "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/><text "
            "x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" stroke=\"none\">{4:g}</text>\n",
            x(v), y.pixel_from, y.pixel_from + 5, y.pixel_from + 19, v);
    }
    fmt::format_to(std::back_inserter(out),
                   "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" stroke=\"none\">{}</text>\n"
                   "<text x=\"14\" y=\"{}\" text-anchor=\"middle\" stroke=\"none\" "
                   "transform=\"rotate(-90 14 {})\">{}</text>\n</g>\n",
                   (x.pixel_from + x.pixel_to) / 2, y.pixel_from + 38,
                   input.seconds ? "seconds since the first dump" : "dump",
                   (y.pixel_from + y.pixel_to) / 2, (y.pixel_from + y.pixel_to) / 2,
                   input.bytes ? "in use (bytes)" : "in use (objects)");
}

void write_lines(std::string& out, const ChartInput& input, const Scale& x, const Scale& y) {
    out += "<g id=\"growth-lines\" fill=\"none\" stroke-width=\"2\" "
           "stroke-linejoin=\"round\">\n";
    for (size_t l = 0; l < input.lines.size(); ++l) {
        const ChartLine& line = input.lines[l];
        std::string points;
        for (size_t d = 0; d < line.values.size(); ++d) {
            fmt::format_to(std::back_inserter(points), "{}{:.1f},{:.1f}", d == 0 ? "" : " ",
                           x(input.x[d]), y(static_cast<double>(line.values[d])));
        }
        fmt::format_to(std::back_inserter(out),
                       "<polyline class=\"growth-line\" stroke=\"{}\" points=\"{}\"><title>{}: "
                       "{}</title></polyline>\n",
                       line_colors[l % line_colors.size()], points, escape_xml(line.label),
                       escape_xml(line.note));
    }
    out += "</g>\n";
}

void write_legend(std::string& out, const ChartInput& input, double top) {
    out += "<g id=\"growth-legend\">\n";
    for (size_t l = 0; l < input.lines.size(); ++l) {
        double y = top + static_cast<double>(l) * legend_line;
        fmt::format_to(std::back_inserter(out),
                       "<g class=\"growth-legend-entry\"><rect x=\"{}\" y=\"{}\" width=\"14\" "
                       "height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{} ({})</text></g>\n",
                       left_pad, y - 9, line_colors[l % line_colors.size()], left_pad + 20, y,
                       escape_xml(input.lines[l].label), escape_xml(input.lines[l].note));
    }
    out += "</g>\n";
}

} // namespace

Chart growth_chart(const ChartInput& input, double width) {
    double low = 0;
    double high = 0;
    for (const ChartLine& line : input.lines) {
        for (int64_t value : line.values) {
            low = std::min(low, static_cast<double>(value));
            high = std::max(high, static_cast<double>(value));
        }
    }
    if (high == low) {
        high = low + 1; // nothing to scale: a flat line at the bottom
    }
    // The value axis ends on ticks.
    double y_step = tick_step(high - low, 5, input.bytes);
    low = std::floor(low / y_step) * y_step;
    high = std::ceil(high / y_step) * y_step;
    double first = input.x.empty() ? 0 : input.x.front();
    double last = input.x.empty() ? 1 : input.x.back();
    Scale x{first, last, left_pad, width - right_pad};
    Scale y{low, high, plot_top + plot_height, plot_top};
    Chart chart;
    double legend_top = plot_top + plot_height + axis_room + legend_line;
    chart.height = legend_top + static_cast<double>(input.lines.size()) * legend_line;
    fmt::format_to(std::back_inserter(chart.svg),
                   "<g id=\"growth-chart\">\n<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" "
                   "fill=\"rgb(255,255,255)\"/>\n<text id=\"growth-title\" x=\"{}\" y=\"26\" "
                   "text-anchor=\"middle\" style=\"font-size: 17px\">{}</text>\n",
                   width, chart.height, width / 2, escape_xml(input.title));
    write_axes(chart.svg, input, x, y, y_step);
    write_lines(chart.svg, input, x, y);
    write_legend(chart.svg, input, legend_top);
    chart.svg += "</g>\n";
    return chart;
}

} // namespace heapkit
