// SPDX-License-Identifier: MIT
#include "heapkit/read/read_dump.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

namespace {

// The layout real `jeprof --raw` writes: symbol section, then the dump as served.
const char* symbolized = "--- symbol\n"
                         "binary=/srv/app\n"
                         "0x00005630875da157 hold_pages<0000000000001139>\n"
                         "0x00007f1e594a57b8 outer_fn--inlined_fn\n"
                         "0x00007fe70cea57b9 std::foo(char const*, int)@@GLIBCXX_3.4.26\n"
                         "---\n"
                         "--- heap\n"
                         "heap_v2/1\n"
                         "  t*: 1: 4096 [1: 4096]\n"
                         "@ 0x1 0x5630875da158\n"
                         "  t*: 1: 4096 [1: 4096]\n"
                         "\n"
                         "MAPPED_LIBRARIES:\n"
                         "5630875da000-5630875db000 r-xp 00001000 fe:00 1  /srv/app\n";

} // namespace

TEST_CASE("heapkit::parse_dump reads jeprof symbolized profiles") {
    auto dump = parse_dump(symbolized, "sym.prof");
    REQUIRE(dump);
    CHECK(dump->jeprof_binary == "/srv/app");
    CHECK(dump->jeprof_symbols.at(0x5630875da157) == std::vector<std::string>{"hold_pages"});
    CHECK(dump->jeprof_symbols.at(0x7f1e594a57b8) ==
          std::vector<std::string>{"outer_fn", "inlined_fn"});
    CHECK(dump->jeprof_symbols.at(0x7fe70cea57b9) ==
          std::vector<std::string>{"std::foo(char const*, int)@@GLIBCXX_3.4.26"});
    REQUIRE(dump->stacks.size() == 1);
    auto frames = dump->frames_of(dump->stacks[0]);
    REQUIRE(frames.size() == 2);
    CHECK(dump->addresses[frames[1]] == 0x5630875da158);
    CHECK(dump->maps.size() == 1);
}

TEST_CASE("heapkit::parse_dump reports errors in symbolized profiles at their line") {
    auto unclosed = parse_dump("--- symbol\n0x1 f\n", "sym.prof");
    REQUIRE_FALSE(unclosed);
    CHECK(unclosed.error().message.find("sym.prof:2: symbol section not closed") == 0);

    auto cpu = parse_dump("--- symbol\n---\n--- profile\n", "sym.prof");
    REQUIRE_FALSE(cpu);
    CHECK(cpu.error().message.find("sym.prof:3: \"profile\" profile is not a heap profile") == 0);

    auto bad_line = parse_dump("--- symbol\nxyz\n---\n", "sym.prof");
    REQUIRE_FALSE(bad_line);
    CHECK(bad_line.error().message.find("sym.prof:2: expected \"0x<address> <name>\"") == 0);

    // Line numbers inside the embedded dump count from the top of the file.
    auto bad_dump =
        parse_dump("--- symbol\n---\n--- heap\nheap_v2/1\n  t*: 1: 1 [0: 0]\n@ 0x1\n", "sym.prof");
    REQUIRE_FALSE(bad_dump);
    CHECK(bad_dump.error().message == "sym.prof:7: expected \"t*:\" count line after stack");
}
