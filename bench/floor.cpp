// SPDX-License-Identifier: MIT
// heapkit-floor DUMP: the least a converter of DUMP can do. It starts as the tools start
// (linked against libheapkit and its libraries, loaded and relocated alike), opens the
// file as they do (heapkit's InputBuffer: mapped, read ahead) and counts its lines. The
// tools' distance from this program is their own work; below it is only process start
// and the page cache. Prints the line count.
#include "heapkit/util/input.hpp"

#include <cstring>
#include <fmt/format.h>

int main(int argc, char** argv) {
    if (argc != 2) {
        fmt::print(stderr, "usage: heapkit-floor DUMP\n");
        return 2;
    }
    auto input = heapkit::InputBuffer::open(argv[1]);
    if (!input) {
        fmt::print(stderr, "heapkit-floor: {}\n", input.error().message);
        return 1;
    }
    std::string_view text = input->text();
    size_t lines = 0;
    for (const char* at = text.data();
         const void* found =
             std::memchr(at, '\n', static_cast<size_t>(text.data() + text.size() - at));) {
        at = static_cast<const char*>(found) + 1;
        ++lines;
    }
    fmt::print("{}\n", lines);
    return 0;
}
