// SPDX-License-Identifier: MIT
#include "heapkit/emit/flame/graph.hpp"
#include "heapkit/emit/flame/labels.hpp"
#include "heapkit/emit/flame/svg.hpp"
#include "heapkit/emit/quantity.hpp"
#include "heapkit/util/xml.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <regex>
#include <vector>

using namespace heapkit;

namespace {

std::string svg_of(std::string_view folded, const FlameOptions& options = {}) {
    FlameGraphBuilder builder(flame_input(options));
    REQUIRE(builder.feed(folded));
    auto graph = builder.finish();
    REQUIRE(graph);
    std::string svg;
    size_t pieces = 0;
    REQUIRE(write_flame_svg(*graph, options, [&](std::string_view piece) {
        svg += piece;
        ++pieces;
        return Result<void>{};
    }));
    CHECK(pieces >= 1);
    return svg;
}

// Every frame's <title>, in document order.
std::vector<std::string> titles(const std::string& svg) {
    std::vector<std::string> found;
    std::regex title("<g><title>([^<]*)</title>");
    for (auto m = std::sregex_iterator(svg.begin(), svg.end(), title); m != std::sregex_iterator();
         ++m) {
        found.push_back((*m)[1]);
    }
    return found;
}

bool has(const std::vector<std::string>& list, std::string_view item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

// The attribute `name` of the <rect> in the frame titled `title`.
std::string rect_attribute(const std::string& svg, const std::string& title, std::string name) {
    size_t at = svg.find("<title>" + title + "</title>");
    REQUIRE(at != std::string::npos);
    size_t attribute = svg.find(" " + name + "=\"", at);
    size_t start = attribute + name.size() + 3;
    return svg.substr(start, svg.find('"', start) - start);
}

} // namespace

TEST_CASE("heapkit::write_flame_svg titles frames as flamegraph.pl does") {
    std::string svg = svg_of("main;parse 1234567\nmain 1000\nstart 650\n");
    CHECK(titles(svg) ==
          std::vector<std::string>{"all (1,236,217 bytes, 100%)", "main (1,235,567 bytes, 99.95%)",
                                   "parse (1,234,567 bytes, 99.87%)", "start (650 bytes, 0.05%)"});
    CHECK(svg.rfind("<?xml version=\"1.0\"", 0) == 0);
    CHECK(svg.find("<g id=\"frames\">") != std::string::npos);
    CHECK(svg.find("<script") > svg.find("</g>\n<script")); // after the frames
    CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
    CHECK(svg.find("http://www.w3.org/2000/svg") != std::string::npos);
    CHECK(svg.find("https://") == std::string::npos); // nothing to fetch
}

TEST_CASE("heapkit::write_flame_svg draws children left-aligned, sorted, within the parent") {
    FlameOptions options;
    options.width = 1020; // 1000 pixels of frames: 1 count is 10 pixels
    std::string svg = svg_of("m;b 30\nm;a 50\nm 20\n", options);
    CHECK(titles(svg)[2] == "a (50 bytes, 50.00%)"); // preorder, children by name
    CHECK(rect_attribute(svg, "m (100 bytes, 100.00%)", "x") == "10.0");
    CHECK(rect_attribute(svg, "m (100 bytes, 100.00%)", "width") == "1000.0");
    CHECK(rect_attribute(svg, "a (50 bytes, 50.00%)", "x") == "10.0");
    CHECK(rect_attribute(svg, "a (50 bytes, 50.00%)", "width") == "500.0");
    CHECK(rect_attribute(svg, "b (30 bytes, 30.00%)", "x") == "510.0");
    CHECK(rect_attribute(svg, "b (30 bytes, 30.00%)", "width") == "300.0");
    // The root at the bottom, deeper levels above; inverted, the other way round.
    double root_y = std::stod(rect_attribute(svg, "all (100 bytes, 100%)", "y"));
    CHECK(std::stod(rect_attribute(svg, "a (50 bytes, 50.00%)", "y")) == root_y - 32);
    options.inverted = true;
    std::string icicle = svg_of("m;b 30\nm;a 50\nm 20\n", options);
    CHECK(rect_attribute(icicle, "all (100 bytes, 100%)", "y") == "36");
    CHECK(rect_attribute(icicle, "a (50 bytes, 50.00%)", "y") == "68");
    CHECK(icicle.find(">Icicle Graph: ") != std::string::npos);
    // Every picture says what it adds up to, in its unit.
    CHECK(svg.find(">Flame Graph: 100 bytes in all</text>") != std::string::npos);
}

TEST_CASE("heapkit::write_flame_svg says how a differential graph reads") {
    FlameOptions options;
    options.differential = true;
    options.countname = "objects";
    std::string svg = svg_of("m;a 10 30\nm;b 40 20\n", options);
    CHECK(svg.find(">Flame Graph: 50 objects after; red grew, blue shrank, widths are the "
                   "after values</text>") != std::string::npos);
}

TEST_CASE("heapkit::write_flame_svg leaves out frames narrower than minwidth") {
    // 1180 pixels for 100000: a count of 8 is 0.094 px, 9 is 0.106 px.
    std::string folded = "a;big 99983\na;narrow 8\na;wide 9\n";
    std::vector<std::string> drawn = titles(svg_of(folded));
    CHECK(drawn.size() == 4);
    CHECK(has(drawn, "wide (9 bytes, 0.01%)"));
    CHECK_FALSE(has(drawn, "narrow (8 bytes, 0.01%)"));
    CHECK(has(drawn, "a (100,000 bytes, 100.00%)")); // its box still holds narrow's share
    // Said on the image (the details line, while no frame is hovered), not only in a comment.
    CHECK(svg_of(folded).find(">1 of 5 frames narrower than 0.1 px not drawn</text>") !=
          std::string::npos);

    FlameOptions options;
    options.minwidth = *parse_min_width("0");
    CHECK(titles(svg_of(folded, options)).size() == 5);
    options.minwidth = *parse_min_width("0.01%"); // 10 of 100000
    CHECK(titles(svg_of(folded, options)).size() == 3);
    options.minwidth = *parse_min_width("1180"); // pixels: the whole width
    CHECK(titles(svg_of(folded, options)) ==
          std::vector<std::string>{"all (100,000 bytes, 100%)", "a (100,000 bytes, 100.00%)"});
}

TEST_CASE("heapkit::write_flame_svg escapes names for XML in titles and labels") {
    FlameOptions options;
    options.countname = "<objects>";
    std::string svg =
        svg_of("std::map<int, char>::at(int const&) \"x\";bad\x01\xff name 10\n", options);
    CHECK(has(titles(svg),
              "std::map&lt;int, char&gt;::at(int const&amp;) &quot;x&quot; (10 &lt;objects&gt;, "
              "100.00%)"));
    CHECK(svg.find(">std::map&lt;int, char&gt;::at(int const&amp;) &quot;x&quot;</text>") !=
          std::string::npos);
    CHECK(has(titles(svg), "bad\xEF\xBF\xBD\xEF\xBF\xBD name (10 &lt;objects&gt;, 100.00%)"));
    CHECK(svg.find('\x01') == std::string::npos);
    options.title = "A & B <C>";
    CHECK(svg_of("a 1\n", options).find(">A &amp; B &lt;C&gt;: 1 &lt;objects&gt; in all</text>") !=
          std::string::npos);
}

TEST_CASE("heapkit::write_flame_svg writes differential titles and change colours") {
    FlameOptions options;
    options.differential = true;
    std::string svg = svg_of("a;b 10 20\na;b;c 5 3\na;d 7 7\na 1 4\n", options);
    CHECK(titles(svg) ==
          std::vector<std::string>{"all (34 bytes, 100%)", "a (34 bytes, 100.00%; +8.82%)",
                                   "b (23 bytes, 67.65%; +29.41%)", "c (3 bytes, 8.82%; -5.88%)",
                                   "d (7 bytes, 20.59%; 0.00%)"});
    CHECK(rect_attribute(svg, "b (23 bytes, 67.65%; +29.41%)", "fill") == "rgb(255,40,40)");
    std::string c_fill = rect_attribute(svg, "c (3 bytes, 8.82%; -5.88%)", "fill");
    CHECK(c_fill.substr(c_fill.size() - 5) == ",255)"); // blue
    CHECK(rect_attribute(svg, "d (7 bytes, 20.59%; 0.00%)", "fill") == "rgb(255,255,255)");
}

TEST_CASE("heapkit::write_flame_svg colours a name alike in every graph") {
    std::string one = svg_of("main;parse 10\nmain;run 5\n");
    std::string two = svg_of("main;run 7\nother;parse 1\n");
    CHECK(rect_attribute(one, "run (5 bytes, 33.33%)", "fill") ==
          rect_attribute(two, "run (7 bytes, 87.50%)", "fill"));
    CHECK(rect_attribute(one, "parse (10 bytes, 66.67%)", "fill") ==
          rect_attribute(two, "parse (1 bytes, 12.50%)", "fill"));
    CHECK(rect_attribute(one, "parse (10 bytes, 66.67%)", "fill") !=
          rect_attribute(one, "run (5 bytes, 33.33%)", "fill"));
    FlameOptions hot;
    hot.colors = *parse_palette("hot");
    std::string fill =
        rect_attribute(svg_of("main;run 5\n", hot), "run (5 bytes, 100.00%)", "fill");
    CHECK(fill != rect_attribute(one, "run (5 bytes, 33.33%)", "fill"));
}

TEST_CASE("heapkit::write_flame_svg draws an empty profile as its root") {
    CHECK(titles(svg_of("")) == std::vector<std::string>{"all (0 bytes, 100%)"});
    FlameOptions narrow;
    narrow.width = 99;
    FlameGraphBuilder builder;
    auto graph = builder.finish();
    REQUIRE(graph);
    auto written = write_flame_svg(*graph, narrow, [](std::string_view) { return Result<void>{}; });
    REQUIRE_FALSE(written);
    CHECK(written.error().message == "a flame graph must be at least 100 pixels wide, not 99");
}

TEST_CASE("heapkit::write_flame_svg stops at the sink's first error") {
    std::string folded;
    for (int i = 0; i < 20000; ++i) {
        folded += "main;function_number_" + std::to_string(i) + " 1\n";
    }
    FlameGraphBuilder builder;
    REQUIRE(builder.feed(folded));
    auto graph = builder.finish();
    REQUIRE(graph);
    FlameOptions options;
    options.minwidth = *parse_min_width("0");
    int calls = 0;
    auto written = write_flame_svg(*graph, options, [&](std::string_view) {
        ++calls;
        return Result<void>(tl::unexpected(Error{"disk full"}));
    });
    REQUIRE_FALSE(written);
    CHECK(written.error().message == "disk full");
    CHECK(calls == 1);
}

TEST_CASE("heapkit flame graph texts: numbers, labels, options") {
    CHECK(with_thousands(0) == "0");
    CHECK(with_thousands(999) == "999");
    CHECK(with_thousands(1000) == "1,000");
    CHECK(with_thousands(18446744073709551615u) == "18,446,744,073,709,551,615");
    CHECK(percent_of(uint64_t{1}, 8) == "12.50");
    CHECK(percent_of(int64_t{-2}, 34) == "-5.88");
    CHECK(percent_of(uint64_t{5}, 0) == "0.00");
    CHECK(fitted_label("parse_config", 20) == "parse_config");
    CHECK(fitted_label("parse_config", 12) == "parse_config");
    CHECK(fitted_label("parse_config", 11.9) == "parse_con..");
    CHECK(fitted_label("parse_config", 3) == "p..");
    CHECK(fitted_label("parse_config", 2.9) == "");
    // Versioned libraries' frames keep their offsets; the file name is cut instead.
    CHECK(fitted_label("libisc-9.18.49-1~deb12u3-Debian.so+0x4ada4", 24) ==
          "libisc-9.18.49..+0x4ada4");
    CHECK(fitted_label("libisc-9.18.49-1~deb12u3-Debian.so!0x4ad80", 20) == "libisc-9.1..!0x4ad80");
    CHECK(fitted_label("libisc-9.18.49-1~deb12u3-Debian.so+0x4ada4", 9) == "libisc-..");
    CHECK(fitted_label("main+0xzz_not_an_address_at_all", 10) == "main+0xz..");
    CHECK(fitted_label("\xC3\xA9t\xC3\xA9_\xC3\xA9t\xC3\xA9", 5) == "\xC3\xA9t\xC3\xA9..");
    CHECK(display_name("inlined_[i]") == "inlined");
    CHECK(display_name("a_[x]") == "a_[x]");
    CHECK(parse_min_width("0.5%")->percent);
    CHECK(parse_min_width("2")->value == 2);
    CHECK_FALSE(parse_min_width("-1"));
    CHECK_FALSE(parse_min_width("1px"));
    CHECK_FALSE(parse_min_width("%"));
    CHECK_FALSE(parse_min_width("nan"));
    CHECK_FALSE(parse_min_width("200%")); // past 100 %: only the root would be drawn
    CHECK_FALSE(parse_min_width("100%"));
    CHECK(parse_min_width("99.5%"));
    CHECK(parse_palette("mem") == Palette::mem);
    CHECK_FALSE(parse_palette("java"));
}

TEST_CASE("heapkit::write_flame_svg takes a caller's fills and notes, and nests") {
    FlameGraphBuilder builder;
    REQUIRE(builder.feed("main;leak 300\nmain;cache 100\n"));
    auto graph = builder.finish();
    REQUIRE(graph);
    std::vector<std::string> names(graph->nodes().size());
    for (uint32_t n = 0; n < names.size(); ++n) {
        names[n] = std::string(graph->name(graph->nodes()[n]));
    }
    FlameDrawing drawing;
    drawing.fill = [&](uint32_t node) {
        return names[node] == "leak" ? Rgb{255, 40, 40} : Rgb{255, 255, 255};
    };
    drawing.note = [&](uint32_t node) { return "note <" + names[node] + ">"; };
    drawing.nested_at = 120;
    std::string svg;
    REQUIRE(write_flame_svg(
        *graph, {},
        [&](std::string_view piece) {
            svg += piece;
            return Result<void>{};
        },
        drawing));
    CHECK(svg.rfind("<svg x=\"0\" y=\"120\" width=\"1200\" height=\"", 0) == 0);
    CHECK(svg.find("<?xml") == std::string::npos);
    CHECK(has(titles(svg), "leak (300 bytes, 75.00%; note &lt;leak&gt;)"));
    CHECK(has(titles(svg), "all (400 bytes, 100%; note &lt;&gt;)"));
    CHECK(rect_attribute(svg, "leak (300 bytes, 75.00%; note &lt;leak&gt;)", "fill") ==
          "rgb(255,40,40)");
    CHECK(rect_attribute(svg, "main (400 bytes, 100.00%; note &lt;main&gt;)", "fill") ==
          "rgb(255,255,255)");
    double height = flame_svg_height(*graph, {});
    CHECK(svg.find(fmt::format("height=\"{}\"", height)) != std::string::npos);
}

TEST_CASE("heapkit::write_flame_svg draws a subtitle under the title, cut to the width") {
    FlameOptions options;
    options.width = 300;
    std::string plain = svg_of("main;f 10\n", options);
    CHECK(plain.find("id=\"subtitle\"") == std::string::npos);
    options.subtitle = "varnishd: no symbols beyond .dynsym (stripped); apt install "
                       "varnish-dbgsym, or set DEBUGINFOD_URLS";
    std::string svg = svg_of("main;f 10\n", options);
    std::smatch shown;
    REQUIRE(std::regex_search(svg, shown,
                              std::regex("<text id=\"subtitle\"[^>]*><title>([^<]*)</title>"
                                         "([^<]*)</text>")));
    CHECK(shown[1] == options.subtitle); // all of it on hover
    CHECK(shown[2].length() * 7.2 <= 300);
    CHECK(shown[2].str().starts_with("varnishd: no symbols"));
    // The frames move down by the subtitle's line: the image is that much taller.
    auto height = [](const std::string& text) {
        std::smatch m;
        REQUIRE(std::regex_search(text, m, std::regex("height=\"([0-9.]+)\"")));
        return std::stod(m[1]);
    };
    CHECK(height(svg) == height(plain) + 18);
}
