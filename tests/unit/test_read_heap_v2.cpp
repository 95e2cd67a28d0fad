// SPDX-License-Identifier: MIT
#include "heapkit/read/heap_v2.hpp"
#include "heapkit/read/read_dump.hpp"
#include "heapkit/util/text.hpp"

#include <charconv>
#include <cstdint>
#include <doctest/doctest.h>
#include <span>
#include <string>
#include <vector>

using namespace heapkit;

namespace {

const std::string maps_tail = "\nMAPPED_LIBRARIES:\n"
                              "55d0a0000000-55d0a0001000 r-xp 00001000 fe:00 42  /srv/app\n";

std::string error_of(std::string_view text) {
    auto dump = parse_heap_v2(text, "heap.prof");
    REQUIRE_FALSE(dump);
    return dump.error().message;
}

} // namespace

TEST_CASE("heapkit::parse_heap_v2 reads header, threads with names, stacks and accum columns") {
    std::string text = "heap_v2/524288\n"
                       "  t*: 150: 6229348 [160: 7000000]\n"
                       "  t0: 51: 5816320 [51: 5816320] main thread name\n"
                       "  t1: 99: 413028 [109: 1183680] worker\n"
                       "@ 0x7f1e59aa2630 0x7f1e59aa2d21 0x56487bad21b8\n"
                       "  t*: 97: 406004 [97: 406004]\n"
                       "  t1: 97: 406004 [97: 406004]\n"
                       "@ 0x1 0x2\n"
                       "  t*: 0: 0 [10: 770000]\n" +
                       maps_tail;
    auto dump = parse_heap_v2(text, "heap.prof");
    REQUIRE(dump);
    CHECK(dump->sample_period == 524288);
    CHECK(dump->total.cur_objects == 150);
    CHECK(dump->total.accum_bytes == 7000000);
    REQUIRE(dump->threads.size() == 2);
    CHECK(dump->thread_names.at(0) == "main thread name");
    CHECK(dump->thread_names.at(1) == "worker");
    REQUIRE(dump->stacks.size() == 2);
    auto addresses_of = [&](const RawStack& stack) {
        std::vector<uint64_t> addresses;
        for (uint32_t id : dump->frames_of(stack)) {
            addresses.push_back(dump->addresses[id]);
        }
        return addresses;
    };
    CHECK(addresses_of(dump->stacks[0]) ==
          std::vector<uint64_t>{0x7f1e59aa2630, 0x7f1e59aa2d21, 0x56487bad21b8});
    CHECK(addresses_of(dump->stacks[1]) == std::vector<uint64_t>{0x1, 0x2});
    auto threads = dump->threads_of(dump->stacks[0]);
    REQUIRE(threads.size() == 1);
    CHECK(threads[0].thread_uid == 1);
    CHECK(threads[0].counts.cur_bytes == 406004);
    CHECK(dump->threads_of(dump->stacks[1]).empty());
    CHECK(dump->stacks[1].total.cur_objects == 0);
    CHECK(dump->stacks[1].total.accum_bytes == 770000);
    CHECK(dump->has_accum());
    REQUIRE(dump->maps.size() == 1);
    CHECK(dump->maps[0].path == "/srv/app");
}

TEST_CASE("heapkit::parse_heap_v2 gives each distinct address one id") {
    std::string text = "heap_v2/1\n  t*: 2: 2 [0: 0]\n"
                       "@ 0x10 0x20 0x30\n  t*: 1: 1 [0: 0]\n"
                       "@ 0x10 0x30 0x40 0x30\n  t*: 1: 1 [0: 0]\n" +
                       maps_tail;
    auto dump = parse_heap_v2(text, "heap.prof");
    REQUIRE(dump);
    CHECK(dump->addresses.size() == 4);
    auto second = dump->frames_of(dump->stacks[1]);
    CHECK(std::vector<uint32_t>(second.begin(), second.end()) == std::vector<uint32_t>{0, 2, 3, 2});
    CHECK(dump->addresses[3] == 0x40);
}

TEST_CASE("heapkit::parse_heap_v2 accepts period 1, CRLF line ends and no thread lines") {
    std::string text = "heap_v2/1\r\n  t*: 1: 4096 [0: 0]\r\n@ 0x10\r\n  t*: 1: 4096 [0: 0]\r\n\r\n"
                       "MAPPED_LIBRARIES:\r\n"
                       "00400000-00401000 r-xp 00000000 fe:00 1  /bin/x\r\n";
    auto dump = parse_heap_v2(text, "heap.prof");
    REQUIRE(dump);
    CHECK(dump->sample_period == 1);
    CHECK_FALSE(dump->has_accum());
    CHECK(dump->maps.at(0).path == "/bin/x");
    CHECK(dump->maps.at(0).start == 0x400000);
}

TEST_CASE("heapkit::parse_heap_v2 reports file and line of each error") {
    CHECK(error_of("") == "heap.prof: empty file, expected a jemalloc heap_v2 dump");
    CHECK(error_of("heap profile: 1: 2 [3: 4] @ heap\n").find("heap.prof:1: unsupported") == 0);
    CHECK(error_of("hello\n").find("heap.prof:1: not a jemalloc heap profile") == 0);
    CHECK(error_of("heap_v2/0\n  t*: 0: 0 [0: 0]\n").find("heap.prof:1: sample period is 0") == 0);
    CHECK(error_of("heap_v2/1\n@ 0x1\n") ==
          "heap.prof:2: expected \"t*:\" totals line after the header");
    CHECK(error_of("heap_v2/1\n  t*: 1: 1 [0: 0]\n@ 0x1 0x2\n") ==
          "heap.prof:4: expected \"t*:\" count line after stack");
    CHECK(error_of("heap_v2/1\n  t*: 1: 1 [0: 0]\n@ 0x1\n  t*: 1: 1 [0:\n")
              .find("heap.prof:4: expected a non-negative integer") == 0);
    CHECK(error_of("heap_v2/1\n  t*: -1: 1 [0: 0]\n").find("heap.prof:2:") == 0);
    CHECK(error_of("heap_v2/1\n  t*: 99999999999999999999: 1 [0: 0]\n").find("below 2^63") !=
          std::string::npos);
    CHECK(error_of("heap_v2/1\n  t*: 1: 1 [0: 0]\n@ 0xzz\n").find("heap.prof:3: expected hex") ==
          0);
    CHECK(error_of("heap_v2/1\n  t*: 1: 1 [0: 0]\n@ 0x1\n  t*: 1: 1 [0: 0]\n") ==
          "heap.prof:4: no \"MAPPED_LIBRARIES:\" section at the end (truncated dump?)");
    CHECK(error_of("heap_v2/1\n  t*: 1: 1 [0: 0]\ngarbage\n")
              .find("heap.prof:3: expected \"@ <addresses>\"") == 0);
    CHECK(error_of("heap_v2/1\n  t*: 1: 1 [0: 0]\n@ 0x1\n  t*: 1: 1 [0: 0]\n"
                   "MAPPED_LIBRARIES:\nnot a maps line\n")
              .find("heap.prof:6: expected a maps line") == 0);
    CHECK(error_of(std::string("heap_v2/1\n  t*: 1: 1 [0: 0]\n") + std::string("ab\0cd\n", 6))
              .find("heap.prof:3: NUL byte") == 0);
}

TEST_CASE("heapkit::parse_dump reports a NUL byte at its line and unknown versions") {
    auto nul =
        parse_dump(std::string("heap_v2/1\n  t*: 1: 1 [0: 0]\n@ 0x1") + std::string("\0 0x2\n", 6),
                   "heap.prof");
    REQUIRE_FALSE(nul);
    CHECK(nul.error().message == "heap.prof:3: NUL byte in the text (a damaged file?)");
    CHECK(error_of("heap_v3/1\n").find("heap.prof:1: unsupported heap profile header") == 0);
}

TEST_CASE("heapkit::parse_dump tells binary data from a dump") {
    auto dump = parse_dump(std::string("\x7f"
                                       "ELF\x02\x01\x00\x00",
                                       8),
                           "a.out");
    REQUIRE_FALSE(dump);
    CHECK(dump.error().message == "a.out:1: binary data, not a jemalloc heap profile");
}

TEST_CASE("heapkit::take_hex and take_decimal agree with std::from_chars") {
    const char* cases[] = {"0",
                           "7f1e59aa2630",
                           "DEADbeef",
                           "ffffffffffffffff",
                           "10000000000000000",
                           "0000000000000000000000ffffffffffffffff",
                           "18446744073709551615",
                           "18446744073709551616",
                           "99999999999999999999",
                           "12ab",
                           "g1",
                           "-1",
                           "+1",
                           " 1",
                           ""};
    for (const char* text : cases) {
        for (int base : {10, 16}) {
            CAPTURE(text);
            CAPTURE(base);
            std::string_view view = text;
            uint64_t expected = 0;
            auto [end, ec] =
                std::from_chars(view.data(), view.data() + view.size(), expected, base);
            bool ok = ec == std::errc() && end != view.data();
            std::string_view rest = view;
            auto got = base == 10 ? take_decimal(rest) : take_number(rest, 16);
            CHECK(got.has_value() == ok);
            if (ok && got) {
                CHECK(*got == expected);
                CHECK(rest.data() == end);
            } else {
                CHECK(rest == view); // untouched on failure
            }
        }
    }
    std::string_view prefixed = "0x7F1e zz";
    CHECK(take_hex(prefixed) == 0x7f1e);
    CHECK(prefixed == " zz");
    std::string_view bare_prefix = "0x";
    CHECK(take_hex(bare_prefix) == 0); // the "0"; "x" is left for the caller to refuse
    CHECK(bare_prefix == "x");
}

TEST_CASE("heapkit::take_hex agrees with std::from_chars on random text of every length") {
    // Eight characters at a time near the end of the text, overflow, mixed case.
    const std::string alphabet = "0123456789abcdefABCDEFgG x\n\x80\xff";
    uint64_t state = 42;
    auto next = [&] {
        state = state * 6364136223846793005u + 1442695040888963407u;
        return state >> 33;
    };
    for (int i = 0; i < 20000; ++i) {
        std::string text;
        size_t length = next() % 40;
        bool zeros = next() % 4 == 0;
        for (size_t c = 0; c < length; ++c) {
            text += zeros && c < 10 ? '0' : alphabet[next() % (c % 3 == 0 ? alphabet.size() : 22)];
        }
        CAPTURE(text);
        uint64_t expected = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), expected, 16);
        std::string_view rest = text;
        auto got = take_number(rest, 16);
        REQUIRE(got.has_value() == (ec == std::errc() && end != text.data()));
        if (got) {
            CHECK(*got == expected);
            CHECK(rest.data() == end);
        }
    }
}

namespace {

// Keeps what a StackConsumer is given, addresses spelled out.
struct KeptStacks : StackConsumer {
    const RawDump* begun = nullptr;
    uint64_t period = 0;
    std::vector<std::vector<uint32_t>> frames;
    std::vector<SampledCounts> totals;
    std::vector<std::vector<uint64_t>> thread_uids;
    size_t refuse_at = SIZE_MAX; // the stack whose add() fails

    void begin(const RawDump& dump) override {
        begun = &dump;
        period = dump.sample_period;
        CHECK(dump.threads.size() == 2); // the header is read
    }
    Result<void> add(std::span<const uint32_t> ids, const SampledCounts& total,
                     std::span<const ThreadCounts> threads) override {
        if (frames.size() == refuse_at) {
            return fail("too much");
        }
        frames.emplace_back(ids.begin(), ids.end());
        totals.push_back(total);
        thread_uids.emplace_back();
        for (const ThreadCounts& thread : threads) {
            thread_uids.back().push_back(thread.thread_uid);
        }
        return {};
    }
};

const std::string consumed = "heap_v2/2\n"
                             "  t*: 3: 96 [4: 128]\n"
                             "  t0: 1: 32 [1: 32]\n"
                             "  t7: 2: 64 [3: 96]\n"
                             "@ 0x10 0x20 0x30\n"
                             "  t*: 1: 32 [1: 32]\n"
                             "  t0: 1: 32 [1: 32]\n"
                             "@ 0x20 0x40\n"
                             "  t*: 2: 64 [3: 96]\n"
                             "  t0: 0: 0 [1: 32]\n"
                             "  t7: 2: 64 [2: 64]\n" +
                             maps_tail;

} // namespace

TEST_CASE("heapkit::parse_heap_v2 hands each stack to a consumer and keeps none") {
    KeptStacks kept;
    auto dump = parse_heap_v2(consumed, "heap.prof", 1, {}, &kept);
    REQUIRE(dump);
    CHECK(kept.period == 2);
    CHECK(dump->stacks.empty());
    CHECK(dump->frames.empty());
    CHECK(dump->stack_threads.empty());
    CHECK(dump->maps.size() == 1); // the rest is kept
    REQUIRE(kept.frames.size() == 2);
    // Ids into the dump's addresses, one per distinct address.
    CHECK(kept.frames[0] == std::vector<uint32_t>{0, 1, 2});
    CHECK(kept.frames[1] == std::vector<uint32_t>{1, 3});
    CHECK(dump->addresses.size() == 4);
    CHECK(dump->addresses[3] == 0x40);
    CHECK(kept.totals[1].cur_bytes == 64);
    CHECK(kept.totals[1].accum_objects == 3);
    CHECK(kept.thread_uids[1] == std::vector<uint64_t>{0, 7});
}

TEST_CASE("heapkit::parse_heap_v2 says where a consumer refused a stack") {
    KeptStacks kept;
    kept.refuse_at = 1;
    auto dump = parse_heap_v2(consumed, "heap.prof", 1, {}, &kept);
    REQUIRE_FALSE(dump);
    CHECK(dump.error().message == "heap.prof:8: too much"); // the second stack's line
}
