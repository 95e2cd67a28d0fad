// SPDX-License-Identifier: MIT
#include "heapkit/emit/flame/tree.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <initializer_list>
#include <map>
#include <random>
#include <vector>

using namespace heapkit;

namespace {

FlameGraph graph_of(std::string_view text, FlameInput input = {}) {
    FlameGraphBuilder builder(std::move(input));
    REQUIRE(builder.feed(text));
    auto graph = builder.finish();
    REQUIRE(graph);
    return std::move(*graph);
}

// The node at the end of `path` from the root, or nullptr.
const FlameNode* find(const FlameGraph& graph, std::initializer_list<std::string_view> path) {
    const FlameNode* node = &graph.root();
    for (std::string_view name : path) {
        const FlameNode* next = nullptr;
        for (uint32_t c = node->first_child; c != FlameNode::none;
             c = graph.nodes()[c].next_sibling) {
            if (graph.name(graph.nodes()[c]) == name) {
                CHECK(next == nullptr); // one child a name
                next = &graph.nodes()[c];
            }
        }
        if (next == nullptr) {
            return nullptr;
        }
        node = next;
    }
    return node;
}

uint64_t value_at(const FlameGraph& graph, std::initializer_list<std::string_view> path) {
    const FlameNode* node = find(graph, path);
    return node == nullptr ? 0 : node->value;
}

// Every frame as "path;to;frame" -> value: the tree, whatever order nodes were made in.
std::map<std::string, uint64_t> paths_of(const FlameGraph& graph) {
    std::map<std::string, uint64_t> paths;
    for (const FlameNode& node : graph.nodes()) {
        std::string path(graph.name(node));
        for (const FlameNode* up = &node; up != &graph.root();) {
            up = &graph.nodes()[up->parent];
            path = std::string(graph.name(*up)) + ";" + path;
        }
        CHECK(paths.count(path) == 0); // one node a path
        paths[path] = node.value;
    }
    return paths;
}

std::string error_of(std::string_view text, FlameInput input = {}) {
    FlameGraphBuilder builder(std::move(input));
    auto fed = builder.feed(text);
    if (!fed) {
        return fed.error().message;
    }
    auto graph = builder.finish();
    return graph ? "" : graph.error().message;
}

} // namespace

TEST_CASE("heapkit::FlameGraphBuilder merges stacks into a tree of summed values") {
    FlameGraph graph = graph_of("main;parse;malloc 10\n"
                                "main;parse 5\n"
                                "main;run 20\n"
                                "main;parse;malloc 1\n"
                                "start 2\n");
    CHECK(graph.total() == 38);
    CHECK(value_at(graph, {"main"}) == 36);
    CHECK(value_at(graph, {"main", "parse"}) == 16);
    CHECK(value_at(graph, {"main", "parse", "malloc"}) == 11);
    CHECK(value_at(graph, {"main", "run"}) == 20);
    CHECK(value_at(graph, {"start"}) == 2);
    CHECK(graph.nodes().size() == 6); // root, main, parse, malloc, run, start
    CHECK_FALSE(graph.differential());
}

// flamegraph.pl sorts whole lines, so "f(int)" (a '(' sorts before ';') comes between two
// runs of lines through "f" and it draws "f" twice; here "f" is one frame.
TEST_CASE("heapkit::FlameGraphBuilder keeps one frame a name whatever sorts between") {
    FlameGraph graph = graph_of("a;f 5\n"
                                "a;f(int) 3\n"
                                "a;f;g 2\n"
                                "a;f.part.0 1\n"
                                "a;f;h 4\n");
    CHECK(value_at(graph, {"a", "f"}) == 11);
    CHECK(value_at(graph, {"a", "f", "g"}) == 2);
    CHECK(value_at(graph, {"a", "f", "h"}) == 4);
    CHECK(value_at(graph, {"a", "f(int)"}) == 3);
    CHECK(value_at(graph, {"a", "f.part.0"}) == 1);
    CHECK(graph.total() == 15);
}

// Sorted input: a frame that returns past many siblings, and one that is new after a
// sibling its name is a prefix of.
TEST_CASE("heapkit::FlameGraphBuilder returns to a frame past a thousand siblings") {
    std::string lines = "m;f 1\n";
    for (int i = 1000; i < 2000; ++i) {
        lines += "m;f(" + std::to_string(i) + ") 1\n";
    }
    lines += "m;f;x 5\nm;g 1\nm;h(int) 3\nm;h;y 4\n";
    FlameGraph graph = graph_of(lines);
    CHECK(value_at(graph, {"m", "h"}) == 4);
    CHECK(value_at(graph, {"m", "h", "y"}) == 4);
    CHECK(value_at(graph, {"m", "f"}) == 6);
    CHECK(value_at(graph, {"m", "f", "x"}) == 5);
    CHECK(value_at(graph, {"m", "f(1999)"}) == 1);
    CHECK(value_at(graph, {"m"}) == 1014);
    CHECK(graph.nodes().size() == 1 + 1 + 1 + 1000 + 1 + 1 + 3);
}

TEST_CASE("heapkit::FlameGraphBuilder reads lines split anywhere across pieces") {
    std::string text = "main;a;b 7\nmain;a 3\r\n\nmain;c;d 11\nmain;c 1"; // no final newline
    FlameGraphBuilder builder;
    for (char c : text) {
        REQUIRE(builder.feed(std::string_view(&c, 1)));
    }
    auto graph = builder.finish();
    REQUIRE(graph);
    CHECK(graph->total() == 22);
    CHECK(value_at(*graph, {"main", "a"}) == 10);
    CHECK(value_at(*graph, {"main", "a", "b"}) == 7);
    CHECK(value_at(*graph, {"main", "c"}) == 12);
    CHECK(value_at(*graph, {"main", "c", "d"}) == 11);
}

TEST_CASE("heapkit::FlameGraphBuilder takes names as flamegraph.pl splits them") {
    // Spaces and template arguments stay in a name; the count is after the last space;
    // empty frames inside a stack stay, trailing ones go.
    FlameGraph graph = graph_of("main;std::map<int, char>::insert(std::pair<int, char>&&) 4\n"
                                "main;operator new[](unsigned long)  6\n"
                                "main;;x 1\n"
                                "main;y;; 2\n");
    CHECK(value_at(graph, {"main", "std::map<int, char>::insert(std::pair<int, char>&&)"}) == 4);
    CHECK(value_at(graph, {"main", "operator new[](unsigned long) "}) == 6);
    CHECK(value_at(graph, {"main", "", "x"}) == 1);
    CHECK(value_at(graph, {"main", "y"}) == 2);
    CHECK(find(graph, {"main", "y", ""}) == nullptr);
}

TEST_CASE("heapkit::FlameGraphBuilder reverses stacks to merge them from the leaf") {
    FlameInput input;
    input.reverse = true;
    FlameGraph graph = graph_of("main;a;malloc 3\n"
                                "main;b;malloc 4\n"
                                "main;b 1\n",
                                input);
    CHECK(value_at(graph, {"malloc"}) == 7);
    CHECK(value_at(graph, {"malloc", "a", "main"}) == 3);
    CHECK(value_at(graph, {"malloc", "b", "main"}) == 4);
    CHECK(value_at(graph, {"b", "main"}) == 1);
    CHECK(graph.total() == 8);
}

// As flamegraph.pl draws difffolded.pl's output: widths from the second count, and each
// frame's change is that of the stacks ending in it.
TEST_CASE("heapkit::FlameGraphBuilder reads differential lines: after widths, own changes") {
    FlameInput input;
    input.differential = true;
    FlameGraph graph = graph_of("a;b 10 20\n"
                                "a;b;c 5 3\n"
                                "a;d 7 7\n"
                                "a 1 4\n"
                                "a;gone 9 0\n",
                                input);
    CHECK(graph.differential());
    CHECK(graph.total() == 34);
    CHECK(value_at(graph, {"a"}) == 34);
    CHECK(find(graph, {"a"})->delta == 3);
    CHECK(value_at(graph, {"a", "b"}) == 23);
    CHECK(find(graph, {"a", "b"})->delta == 10);
    CHECK(find(graph, {"a", "b", "c"})->delta == -2);
    CHECK(find(graph, {"a", "d"})->delta == 0);
    CHECK(value_at(graph, {"a", "gone"}) == 0);
    CHECK(find(graph, {"a", "gone"})->delta == -9);
    CHECK(graph.max_line_delta() == 10);
}

TEST_CASE("heapkit::FlameGraphBuilder names the line of malformed input") {
    CHECK(error_of("a;b 1\na;b x\n") == "folded stacks:2: expected \"frame;frame;... COUNT\"");
    CHECK(error_of("a;b 1\n5\n") == "folded stacks:2: expected \"frame;frame;... COUNT\"");
    CHECK(error_of("a;b -1\n") == "folded stacks:1: expected \"frame;frame;... COUNT\"");
    CHECK(error_of("a;b 99999999999999999999\n") ==
          "folded stacks:1: expected \"frame;frame;... COUNT\"");
    FlameInput input;
    input.differential = true;
    input.source = "diff.folded";
    CHECK(error_of("a;b 1 2\na;c 3", input) ==
          "diff.folded:2: expected \"frame;frame;... BEFORE AFTER\"");
    CHECK(error_of("a;b 1 2\n\na;c 3 4\n", input).empty());
}

TEST_CASE("heapkit::FlameGraphBuilder saturates sums instead of wrapping") {
    FlameGraph graph = graph_of("a 18446744073709551615\na;b 5\n");
    CHECK(graph.total() == UINT64_MAX);
    CHECK(value_at(graph, {"a"}) == UINT64_MAX);
}

// Sorted input is built without looking children up until it meets the one case where a
// sorted stack returns to an earlier child (a sibling "f(int)" or "f.part.0" between the
// lines through "f"), or leaves the order. Either way the tree is the one unsorted input
// makes.
TEST_CASE("heapkit::FlameGraphBuilder makes one tree of sorted and shuffled lines") {
    const std::vector<std::string> names{"f", "f(int)", "f.part.0", "f!", "g", "g h", "h", ""};
    std::mt19937 random(7);
    for (int round = 0; round < 200; ++round) {
        std::vector<std::string> lines;
        for (int l = 0; l < 30; ++l) {
            std::string stack = "main";
            for (size_t depth = 1 + random() % 4; depth > 0; --depth) {
                stack += ";" + names[random() % names.size()];
            }
            lines.push_back(stack + " " + std::to_string(1 + random() % 100) + "\n");
        }
        std::sort(lines.begin(), lines.end());
        std::string sorted;
        for (const std::string& line : lines) {
            sorted += line;
        }
        std::shuffle(lines.begin(), lines.end(), random);
        std::string shuffled;
        for (const std::string& line : lines) {
            shuffled += line;
        }
        CAPTURE(sorted);
        CHECK(paths_of(graph_of(sorted)) == paths_of(graph_of(shuffled)));
    }
}

// Sorted input read with pruning keeps every frame holding prune_below of the total, with
// its value; what it drops holds less. Random stacks over names that make sorted input
// return to frames ("f", "f(int)", ...).
TEST_CASE("heapkit::FlameGraphBuilder drops narrow frames of sorted input as it reads") {
    const std::vector<std::string> names{"f", "f(int)", "f.part.0", "g", "g h", "h"};
    std::mt19937 random(11);
    for (int round = 0; round < 200; ++round) {
        std::vector<std::string> lines;
        for (int l = 0; l < 40; ++l) {
            std::string stack = "main";
            for (size_t depth = 1 + random() % 4; depth > 0; --depth) {
                stack += ";" + names[random() % names.size()];
            }
            // Skewed counts: a few wide stacks, many narrow ones.
            uint64_t count = random() % 8 == 0 ? 1000 + random() % 5000 : 1 + random() % 20;
            lines.push_back(stack + " " + std::to_string(count) + "\n");
        }
        std::sort(lines.begin(), lines.end());
        std::string text;
        for (const std::string& line : lines) {
            text += line;
        }
        FlameInput pruning;
        pruning.sorted = true;
        pruning.prune_below = 0.02;
        FlameGraph all = graph_of(text);
        FlameGraph pruned = graph_of(text, pruning);
        std::map<std::string, uint64_t> every = paths_of(all);
        std::map<std::string, uint64_t> kept = paths_of(pruned);
        CAPTURE(text);
        CHECK(pruned.total() == all.total());
        CHECK(pruned.nodes().size() + pruned.dropped() == all.nodes().size());
        for (const auto& [path, value] : every) {
            if (static_cast<double>(value) >= 0.02 * static_cast<double>(all.total())) {
                REQUIRE(kept.count(path) == 1);
                CHECK(kept[path] == value);
            }
        }
        for (const auto& [path, value] : kept) {
            CHECK(every.at(path) == value);
        }
    }
}

// "f" holds little when "f(int)" replaces it, but sorted input comes back to it: kept.
TEST_CASE("heapkit::FlameGraphBuilder keeps a narrow frame that sorted input returns to") {
    FlameInput pruning;
    pruning.sorted = true;
    pruning.prune_below = 0.1;
    FlameGraph graph = graph_of("m;a 100\nm;f 1\nm;f(int) 100\nm;f;x 50\nm;z 1\n", pruning);
    CHECK(value_at(graph, {"m", "f"}) == 51);
    CHECK(value_at(graph, {"m", "f", "x"}) == 50);
    CHECK(find(graph, {"m", "z"}) != nullptr); // still open at the end: finish() keeps it
    CHECK(value_at(graph, {"m"}) == 252);
}

TEST_CASE("heapkit::FlameGraphBuilder refuses unsorted input it was told is sorted") {
    FlameInput sorted;
    sorted.sorted = true;
    sorted.source = "heap.folded";
    CHECK(error_of("a;b 1\na;c 2\na 3\n", sorted) ==
          "heap.folded:3: stacks out of order: expected them sorted bytewise");
    CHECK(error_of("a;b 1\na;c 2\na;c 3\na;c;d 1\n", sorted).empty());
}
