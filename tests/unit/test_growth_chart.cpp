// SPDX-License-Identifier: MIT
#include "heapkit/growth/chart.hpp"

#include <doctest/doctest.h>
#include <regex>
#include <string>
#include <vector>

using namespace heapkit;

namespace {

std::vector<std::string> all_of(const std::string& text, const std::string& pattern) {
    std::vector<std::string> found;
    std::regex re(pattern);
    for (auto m = std::sregex_iterator(text.begin(), text.end(), re); m != std::sregex_iterator();
         ++m) {
        found.push_back((*m)[1]);
    }
    return found;
}

ChartInput two_lines() {
    ChartInput input;
    input.title = "in use <over> time";
    input.x = {0, 0.5, 1.0, 1.5};
    input.lines = {{"1. leak (leaky.c:29)", "growth +8kB/s", {8192, 16384, 24576, 32768}},
                   {"2. cache", "growth 0B/s", {0, 1048576, 1048576, 1048576}}};
    return input;
}

} // namespace

TEST_CASE("heapkit::growth_chart draws a line per series and a legend") {
    Chart chart = growth_chart(two_lines(), 1200);
    CHECK(all_of(chart.svg, "<polyline class=\"growth-line\"[^>]*points=\"([^\"]*)\"").size() == 2);
    std::vector<std::string> points =
        all_of(chart.svg, "<polyline class=\"growth-line\"[^>]*points=\"([^\"]*)\"");
    // Four dumps, four points; x from the left edge of the plot to the right one.
    CHECK(points[0].rfind("90.0,", 0) == 0);
    CHECK(std::count(points[0].begin(), points[0].end(), ',') == 4);
    CHECK(points[0].find(" 1176.0,") != std::string::npos);
    CHECK(
        all_of(chart.svg, "<g class=\"growth-legend-entry\">.*?<text[^>]*>([^<]*)</text>") ==
        std::vector<std::string>{"1. leak (leaky.c:29) (growth +8kB/s)", "2. cache (growth 0B/s)"});
    CHECK(chart.svg.find("in use &lt;over&gt; time") != std::string::npos);
    CHECK(chart.height > 300);
}

TEST_CASE("heapkit::growth_chart labels axes in bytes and seconds, or objects and dumps") {
    Chart chart = growth_chart(two_lines(), 1200);
    std::vector<std::string> labels = all_of(chart.svg, "text-anchor=\"end\"[^>]*>([^<]*)<");
    CHECK(labels == std::vector<std::string>{"0", "256kB", "512kB", "768kB", "1MB"});
    std::vector<std::string> seconds = all_of(chart.svg, "text-anchor=\"middle\"[^>]*>([^<]*)<");
    CHECK(std::find(seconds.begin(), seconds.end(), "1.4") != seconds.end()); // 0.2 apart
    CHECK(std::find(seconds.begin(), seconds.end(), "seconds since the first dump") !=
          seconds.end());

    ChartInput objects = two_lines();
    objects.bytes = false;
    objects.seconds = false;
    objects.x = {1, 2, 3, 4};
    objects.lines[1].values = {0, 3, 7, 12};
    objects.lines[0].values = {1, 2, 3, 4};
    Chart counted = growth_chart(objects, 800);
    CHECK(all_of(counted.svg, "text-anchor=\"end\"[^>]*>([^<]*)<") ==
          std::vector<std::string>{"0", "5", "10", "15"});
    std::vector<std::string> dumps = all_of(counted.svg, "text-anchor=\"middle\"[^>]*>([^<]*)<");
    CHECK(std::find(dumps.begin(), dumps.end(), "dump") != dumps.end());
    CHECK(std::find(dumps.begin(), dumps.end(), "2.5") == dumps.end()); // whole dumps only
}
