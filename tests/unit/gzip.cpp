// SPDX-License-Identifier: MIT
#include "heapkit/util/gzip.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

TEST_CASE("heapkit::gzip round-trips and is detected by magic") {
    std::string text(100000, 'x');
    text += "heap_v2/1\n";
    std::string packed = gzip(text, 6);
    CHECK(is_gzip(packed));
    CHECK_FALSE(is_gzip(text));
    auto unpacked = gunzip(packed, "in.gz");
    REQUIRE(unpacked);
    CHECK(*unpacked == text);
}

TEST_CASE("heapkit::gunzip joins concatenated members") {
    auto joined = gunzip(gzip("first ", 1) + gzip("second", 9), "cat.gz");
    REQUIRE(joined);
    CHECK(*joined == "first second");
}

TEST_CASE("heapkit::gunzip reports truncated and corrupt data") {
    std::string packed = gzip(std::string(5000, 'a') + "end", 6);
    auto truncated = gunzip(packed.substr(0, packed.size() / 2), "cut.gz");
    REQUIRE_FALSE(truncated);
    CHECK(truncated.error().message == "cut.gz: truncated gzip data");

    std::string corrupt = packed;
    corrupt[12] ^= 0x55;
    corrupt[13] ^= 0x55;
    auto broken = gunzip(corrupt, "bad.gz");
    REQUIRE_FALSE(broken);
    CHECK(broken.error().message.find("bad.gz: ") == 0);

    auto trailing = gunzip(packed + "junk", "junk.gz");
    REQUIRE_FALSE(trailing);
    CHECK(trailing.error().message == "junk.gz: trailing garbage after gzip data");
}
