// SPDX-License-Identifier: MIT
#include "heapkit/read/maps.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

TEST_CASE("heapkit::parse_maps_line reads file-backed executable mappings") {
    auto entry = parse_maps_line(
        "7fe70d209000-7fe70d2af000 r-xp 00009000 fe:00 14884874   /usr/lib/libjemalloc.so.2",
        "m:1");
    REQUIRE(entry);
    CHECK(entry->start == 0x7fe70d209000);
    CHECK(entry->end == 0x7fe70d2af000);
    CHECK(entry->file_offset == 0x9000);
    CHECK(entry->executable);
    CHECK_FALSE(entry->deleted);
    CHECK(entry->path == "/usr/lib/libjemalloc.so.2");
}

TEST_CASE("heapkit::parse_maps_line keeps spaces in paths and flags deleted files") {
    auto spaced =
        parse_maps_line("1000-2000 r-xp 00000000 08:01 7   /opt/My App/bin/my app", "m:1");
    REQUIRE(spaced);
    CHECK(spaced->path == "/opt/My App/bin/my app");
    auto deleted = parse_maps_line("1000-2000 r-xp 00000000 08:01 7  /srv/app (deleted)", "m:1");
    REQUIRE(deleted);
    CHECK(deleted->deleted);
    CHECK(deleted->path == "/srv/app");
}

TEST_CASE("heapkit::parse_maps_line undoes the kernel's escape of a newline, only that one") {
    // mangle_path(..., "\n") in fs/seq_file.c: a newline becomes \012, nothing else changes.
    auto newline = parse_maps_line(
        "1000-2000 r-xp 00000000 08:01 7   /opt/two\\012lines/lib\\012.so (deleted)", "m:1");
    REQUIRE(newline);
    CHECK(newline->path == "/opt/two\nlines/lib\n.so");
    CHECK(newline->deleted);
    auto backslash = parse_maps_line("1000-2000 r-xp 00000000 08:01 7   /opt/a\\b\\01", "m:1");
    REQUIRE(backslash);
    CHECK(backslash->path == "/opt/a\\b\\01");
}

TEST_CASE("heapkit::parse_maps_line handles pseudo and anonymous mappings") {
    auto vdso = parse_maps_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0    [vdso]", "m:1");
    REQUIRE(vdso);
    CHECK(vdso->path == "[vdso]");
    auto anonymous = parse_maps_line("7fe70b300000-7fe70bc00000 rw-p 00000000 00:00 0 ", "m:1");
    REQUIRE(anonymous);
    CHECK(anonymous->path.empty());
    CHECK_FALSE(anonymous->executable);
}

TEST_CASE("heapkit::parse_maps_line rejects garbage with its location") {
    for (const char* bad : {"", "zzz", "1000-", "1000-2000", "2000-1000 r-xp 0 0:0 0 /x",
                            "1000-2000 r-xp xyz 08:01 7 /x", "1000-2000 r-xp 0"}) {
        auto entry = parse_maps_line(bad, "heap.prof:9");
        REQUIRE_FALSE(entry);
        CHECK(entry.error().message.find("heap.prof:9: ") == 0);
    }
}
