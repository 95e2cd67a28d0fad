// SPDX-License-Identifier: MIT
// A line chart of values over a series of dumps, as SVG elements to put in a document.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace heapkit {

struct ChartLine {
    std::string label;           // the legend's text
    std::string note;            // shown on hovering the line
    std::vector<int64_t> values; // one per dump
};

struct ChartInput {
    std::string title;
    std::vector<double> x; // per dump, ascending: seconds since the first, or dump numbers
    bool seconds = true;   // x counts seconds (else dumps)
    bool bytes = true;     // values count bytes (else objects)
    std::vector<ChartLine> lines;
};

struct Chart {
    std::string svg; // elements only, drawn from y = 0 down; no <svg> around them
    double height = 0;
};

// The chart `width` pixels wide: a title, axes with ticks (bytes as B, kB, MB, ...; seconds
// or dump numbers), one <polyline class="growth-line"> per line in <g id="growth-lines">,
// and under the axes a legend, <g id="growth-legend">, one entry per line in its colour.
Chart growth_chart(const ChartInput& input, double width);

} // namespace heapkit
