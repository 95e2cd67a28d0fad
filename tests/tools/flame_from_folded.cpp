// SPDX-License-Identifier: MIT
// Test helper: folded stacks on standard input -> heapkit's flame graph SVG on standard
// output, through the library's write_flame_graph(). The end-to-end tests use it to draw
// folded text that heapfold does not make itself (difffolded.pl's two-count lines) and
// compare the result with flamegraph.pl's. Input is read in odd-sized pieces, so that
// lines span them.
//
// flame_from_folded [--differential] [--reverse] [--inverted] [--countname UNIT]
//                   [--width PX] [--minwidth PX|PCT%]
#include "heapkit/emit/flame/graph.hpp"
#include "heapkit/emit/flame/svg.hpp"

#include <cstdio>
#include <string>

namespace {

int usage(const char* complaint) {
    std::fprintf(stderr, "flame_from_folded: %s\n", complaint);
    return 1;
}

} // namespace

int main(int argc, char** argv) {
    heapkit::FlameOptions options;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value = i + 1 < argc ? argv[i + 1] : "";
        if (arg == "--differential") {
            options.differential = true;
        } else if (arg == "--reverse") {
            options.reverse = true;
        } else if (arg == "--inverted") {
            options.inverted = true;
        } else if (arg == "--countname") {
            options.countname = value;
            ++i;
        } else if (arg == "--width") {
            options.width = static_cast<unsigned>(std::stoul(value));
            ++i;
        } else if (arg == "--minwidth") {
            auto width = heapkit::parse_min_width(value);
            if (!width) {
                return usage("--minwidth takes pixels or a percentage");
            }
            options.minwidth = *width;
            ++i;
        } else {
            return usage(("unknown argument " + arg).c_str());
        }
    }
    auto read_stdin = [](const heapkit::Sink& sink) -> heapkit::Result<void> {
        char buffer[4093];
        size_t got = 0;
        while ((got = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) {
            if (auto ok = sink(std::string_view(buffer, got)); !ok) {
                return ok;
            }
        }
        return {};
    };
    auto write_stdout = [](std::string_view piece) -> heapkit::Result<void> {
        if (std::fwrite(piece.data(), 1, piece.size(), stdout) != piece.size()) {
            return heapkit::fail("<stdout>: cannot write");
        }
        return {};
    };
    if (auto ok = heapkit::write_flame_graph(read_stdin, options, write_stdout); !ok) {
        return usage(ok.error().message.c_str());
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
}
