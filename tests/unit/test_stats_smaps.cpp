// SPDX-License-Identifier: MIT
#include "heapkit/stats/smaps.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace heapkit::stats;

namespace {

std::string mapping(const std::string& header, uint64_t rss_kb, uint64_t anonymous_kb) {
    return header + "\nSize:               8192 kB\nRss:             " + std::to_string(rss_kb) +
           " kB\nAnonymous:       " + std::to_string(anonymous_kb) +
           " kB\nTHPeligible:    0\nVmFlags: rd wr mr mw me ac sd\n";
}

} // namespace

TEST_CASE("heapkit::stats::parse_smaps splits RSS and finds thread stacks") {
    std::string text =
        mapping("55d0a0000000-55d0a0001000 r-xp 00000000 fe:00 123   /usr/bin/prog", 4, 0) +
        mapping("55d0a0001000-55d0a0002000 rw-p 00001000 fe:00 123   /usr/bin/prog", 4, 4) +
        mapping("7f0000000000-7f0000001000 ---p 00000000 00:00 0 ", 0, 0) +   // guard
        mapping("7f0000001000-7f0000801000 rw-p 00000000 00:00 0 ", 24, 24) + // its stack
        mapping("7f0000900000-7f0004900000 rw-p 00000000 00:00 0 ", 1000, 1000) +
        mapping("7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0    [stack]", 12, 12) +
        mapping("7f1000000000-7f1000001000 rw-s 00000000 00:01 9    /dev/shm/x (deleted)", 4, 0);
    auto memory = parse_smaps(text, "smaps");
    REQUIRE(memory);
    CHECK(memory->per_mapping);
    CHECK(memory->mappings == 7);
    CHECK(memory->rss == (4 + 4 + 24 + 1000 + 12 + 4) * 1024);
    CHECK(memory->anonymous == (4 + 24 + 1000 + 12) * 1024);
    CHECK(memory->file == 8 * 1024);
    CHECK(memory->stacks == (24 + 12) * 1024);
}

TEST_CASE("heapkit::stats::parse_smaps reads smaps_rollup") {
    auto memory = parse_smaps(
        mapping("55d0a0000000-7ffc00021000 ---p 00000000 00:00 0                          [rollup]",
                2048, 1024),
        "smaps_rollup");
    REQUIRE(memory);
    CHECK_FALSE(memory->per_mapping);
    CHECK(memory->rss == 2048 * 1024);
    CHECK(memory->stacks == 0);
}

TEST_CASE("heapkit::stats::parse_smaps refuses other text with its line") {
    for (const char* bad :
         {"", "hello world\n", "Rss: 4 kB\n", "1000-2000 rw-p 00000000 00:00 0\nRss: four kB\n",
          "1000-2000 rw-p 00000000 00:00 0\nRss: 4 MB\n"}) {
        auto memory = parse_smaps(bad, "s");
        REQUIRE_FALSE(memory);
        CHECK(memory.error().message.starts_with("s:"));
    }
}
