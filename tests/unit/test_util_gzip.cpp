// SPDX-License-Identifier: MIT
#include "heapkit/util/gzip.hpp"

#include <algorithm>
#include <cstring>
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <zlib.h>

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

TEST_CASE("heapkit::gzip deflates inputs of 4 GiB and more whole") {
    // Zero pages of an anonymous mapping cost neither memory nor time to read; only the
    // last page, with a mark past the 4 GiB line, is real.
    const size_t size = (size_t{4} << 30) + 4096;
    void* mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(mapped != MAP_FAILED);
    char* last_page = static_cast<char*>(mapped) + size - 4096;
    std::memcpy(last_page + 4096 - 4, "tail", 4);
    std::string packed = gzip({static_cast<const char*>(mapped), size}, 1);
    // The gzip trailer: CRC-32 and length mod 2^32 of what deflate took in. The CRC of
    // 4 GiB of zeros is built from a megabyte's, doubled.
    std::string zeros(1 << 20, '\0');
    uLong crc = crc32(0, reinterpret_cast<const Bytef*>(zeros.data()), 1 << 20);
    for (z_off64_t length = 1 << 20; length < (z_off64_t{4} << 30); length *= 2) {
        crc = crc32_combine64(crc, crc, length);
    }
    uLong last = crc32(0, reinterpret_cast<const Bytef*>(last_page), 4096);
    crc = crc32_combine64(crc, last, 4096);
    ::munmap(mapped, size);
    REQUIRE(packed.size() > 8);
    auto le32 = [&](size_t at) {
        uint32_t value = 0;
        std::memcpy(&value, packed.data() + at, 4);
        return value;
    };
    CHECK(le32(packed.size() - 8) == static_cast<uint32_t>(crc));
    CHECK(le32(packed.size() - 4) == static_cast<uint32_t>(size));
    // deflate cannot do better than about 1:1032, so the whole input is in there (and
    // the output outgrew its first buffer).
    CHECK(packed.size() > size / 1100);
}

TEST_CASE("heapkit::gunzip stops at its limits, naming the input") {
    std::string member = gzip(std::string(1 << 20, 'a'), 9);
    std::string many;
    for (int i = 0; i < 40; ++i) {
        many += member; // 40 MiB inflated from a few kilobytes
    }
    auto capped = gunzip(many, "bomb.gz", {uint64_t{16} << 20, true});
    REQUIRE_FALSE(capped);
    CHECK(capped.error().message.starts_with("bomb.gz: inflates to more than 16 MiB"));
    CHECK(gunzip(many, "bomb.gz", {uint64_t{40} << 20, true})->size() == size_t{40} << 20);
    auto binary = gunzip(gzip(std::string(100, '\0'), 9), "zeros.gz", {1 << 20, true});
    REQUIRE_FALSE(binary);
    CHECK(binary.error().message == "zeros.gz: inflates to binary data, not text");
    CHECK(gunzip(gzip(std::string(100, '\0'), 9), "zeros.gz")->size() == 100); // not text
}
