// SPDX-License-Identifier: MIT
#include "heapkit/stats/report_svg.hpp"

#include "heapkit/emit/quantity.hpp"
#include "heapkit/util/xml.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace heapkit::stats {
namespace {

constexpr int width = 1000;
constexpr int label_width = 210; // row labels, left of the bars
constexpr int value_width = 110; // the step's bytes, right of the bars
constexpr int bar_height = 22;
constexpr int gap = 6;
constexpr int section_gap = 40;

// A bar: where it starts and ends on the byte axis.
struct Bar {
    int64_t from = 0;
    int64_t to = 0;
};

std::vector<Bar> bars_of(const std::vector<Row>& rows) {
    std::vector<Bar> bars;
    int64_t running = 0;
    for (const Row& row : rows) {
        if (row.subtotal) {
            running = row.bytes;
            bars.push_back({0, row.bytes});
        } else {
            bars.push_back({running, running + row.bytes});
            running += row.bytes;
        }
    }
    return bars;
}

const char* colour(const Row& row) {
    if (row.subtotal) {
        return "#4e79a7";
    }
    return row.bytes < 0 ? "#59a14f" : "#e15759";
}

class Chart {
public:
    explicit Chart(int64_t scale)
        : m_scale(std::max<int64_t>(scale, 1)) {}

    void title(std::string_view text) {
        m_body += fmt::format("<text x=\"10\" y=\"{}\" class=\"title\">{}</text>\n", m_y + 18,
                              escape_xml(text));
        m_y += 32;
    }

    void section(std::string_view text, const std::vector<Row>& rows) {
        m_body += fmt::format("<text x=\"10\" y=\"{}\" class=\"section\">{}</text>\n", m_y + 14,
                              escape_xml(text));
        m_y += 24;
        std::vector<Bar> bars = bars_of(rows);
        for (size_t i = 0; i < rows.size(); ++i) {
            row(rows[i], bars[i]);
        }
        m_y += section_gap - gap;
    }

    std::string finish() const {
        return fmt::format(
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
            "xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<style>text {{ font-family: Verdana, sans-serif; font-size: 12px; fill: #222; }}\n"
            ".title {{ font-size: 16px; }} .section {{ font-size: 13px; font-weight: bold; }}\n"
            ".value {{ text-anchor: end; }} .total {{ font-weight: bold; }}</style>\n"
            "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n{2}</svg>\n",
            width, m_y + 10, m_body);
    }

private:
    double x_of(int64_t bytes) const {
        double span = width - label_width - value_width - 20;
        return label_width + span * static_cast<double>(std::max<int64_t>(bytes, 0)) /
                                 static_cast<double>(m_scale);
    }

    void row(const Row& row, const Bar& bar) {
        double left = x_of(std::min(bar.from, bar.to));
        double right = x_of(std::max(bar.from, bar.to));
        int64_t magnitude = row.bytes < 0 ? -row.bytes : row.bytes;
        std::string value =
            (row.subtotal ? "" : (row.bytes < 0 ? "- " : "+ ")) + quantity(magnitude, true);
        std::string tip = row.what + (row.knob.empty() ? "" : " Knob: " + row.knob);
        m_body += fmt::format(
            "<g><title>{0}: {1} bytes. {2}</title>\n"
            "<text x=\"{3}\" y=\"{4}\"{5}>{0}</text>\n"
            "<rect x=\"{6:.1f}\" y=\"{7}\" width=\"{8:.1f}\" height=\"{9}\" fill=\"{10}\"/>\n"
            "<text x=\"{11}\" y=\"{4}\" class=\"value{12}\">{13}</text></g>\n",
            escape_xml(row.label), row.bytes, escape_xml(tip), row.subtotal ? 10 : 22, m_y + 15,
            row.subtotal ? " class=\"total\"" : "", left, m_y, std::max(right - left, 1.0),
            bar_height, colour(row), width - 10, row.subtotal ? " total" : "", escape_xml(value));
        m_y += bar_height + gap;
    }

    int64_t m_scale;
    int m_y = 0;
    std::string m_body;
};

int64_t largest(const std::vector<Row>& rows) {
    int64_t most = 0;
    for (const Bar& bar : bars_of(rows)) {
        most = std::max({most, bar.from, bar.to});
    }
    return most;
}

} // namespace

std::string report_svg(const Reconciliation& report, std::string_view stats_source) {
    Chart chart(std::max(largest(report.allocator), largest(report.rss)));
    chart.title(fmt::format("Why is RSS bigger than the heap profile? ({})", stats_source));
    if (report.stats.printed_at_exit) {
        chart.section("Printed at exit (opt.stats_print:true), after the program's destructors: "
                      "what it held while it ran is not here",
                      {});
    }
    chart.section("From the heap profile to jemalloc's address space", report.allocator);
    if (!report.rss.empty()) {
        chart.section("The process's RSS", report.rss);
    }
    return chart.finish();
}

} // namespace heapkit::stats
