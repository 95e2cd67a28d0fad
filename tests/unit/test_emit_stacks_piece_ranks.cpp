// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/piece_ranks.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <random>
#include <string>
#include <vector>

using namespace heapkit;

namespace {

// Tokens and the texts they must spell, made here with fmt, not by TokenTable.
struct Tokens {
    TokenTable table;
    std::vector<std::string> texts;

    void string(const std::string& text) {
        uint32_t token = table.intern(text);
        if (token == texts.size()) {
            texts.push_back(text);
        }
    }
    void address(const std::string& prefix, uint64_t value) {
        table.add_address(table.intern_prefix(prefix), value);
        texts.push_back(fmt::format("{}0x{:x}", prefix, value));
    }
};

// The truth: every piece ("text;" and "text") spelled, sorted as strings, ranked by
// place among the distinct ones.
void check_ranks(const Tokens& tokens, const PieceRanks& ranks) {
    std::vector<std::string> pieces;
    for (const std::string& text : tokens.texts) {
        pieces.push_back(text + ";");
        pieces.push_back(text);
    }
    std::sort(pieces.begin(), pieces.end());
    pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
    auto rank = [&](const std::string& piece) {
        return static_cast<uint32_t>(std::lower_bound(pieces.begin(), pieces.end(), piece) -
                                     pieces.begin());
    };
    REQUIRE(ranks.inner.size() == tokens.texts.size());
    CHECK(ranks.count == pieces.size());
    for (uint32_t t = 0; t < tokens.texts.size(); ++t) {
        CAPTURE(tokens.texts[t]);
        REQUIRE(tokens.table.text(t) == tokens.texts[t]);
        CHECK(ranks.inner[t] == rank(tokens.texts[t] + ";"));
        CHECK(ranks.last[t] == rank(tokens.texts[t]));
    }
}

const std::vector<uint64_t> tricky_values = {0x0,
                                             0x1,
                                             0x9,
                                             0xa,
                                             0xf,
                                             0x10,
                                             0x19,
                                             0x1a,
                                             0x1f,
                                             0x100,
                                             0x1a2,
                                             0x1a2b,
                                             0x1a20,
                                             0x1a29,
                                             0x1a2a,
                                             0x1a,
                                             0x1a2, // copies of 0x1a, 0x1a2
                                             0x9f,
                                             0x90,
                                             0xa0,
                                             0xa9,
                                             0x99999,
                                             0x9999a,
                                             0x7fffffffffff,
                                             0x0fffffffffffffff,
                                             0x1000000000000000,
                                             0x8000000000000000,
                                             0xffffffffffffffff};

} // namespace

TEST_CASE("heapkit::rank_pieces ranks addresses as their texts sort") {
    Tokens tokens;
    // Strings among the address texts: equal to some ("0x1a", "a+0x1a2b"), starting
    // with a prefix's "0x" and more, the prefixes themselves, an empty text.
    for (const char* text : {"main", "0x1a", "0x", "0x1a (x.c:3)", "0x1g", "a+0x1a2b", "a+", "a+0x",
                             "a+0x1:b", "", "zz", "0x9 ", "libc.so.6+0xfz"}) {
        tokens.string(text);
    }
    // Prefixes that start one another's text (but not their "0x"), and the unnamed "".
    for (const char* prefix : {"", "a+", "ab+", "a.so+", "libc.so.6+", "a+b+"}) {
        for (uint64_t value : tricky_values) {
            tokens.address(prefix, value);
        }
    }
    tokens.string("after the addresses");
    check_ranks(tokens, rank_pieces(tokens.table));
    check_ranks(tokens, rank_pieces_spelled(tokens.table));
}

TEST_CASE("heapkit::rank_pieces on random addresses of every width") {
    std::mt19937_64 random(47);
    Tokens tokens;
    const std::vector<std::string> prefixes = {"", "x+", "x.so+", "y+"};
    for (int i = 0; i < 4000; ++i) {
        // Widths of 1 to 16 digits, many sharing their first digits.
        unsigned digits = 1 + static_cast<unsigned>(random() % 16);
        uint64_t value = random() % 3 == 0 ? random() : random() % 64 + 0x1a0;
        value = digits == 16 ? value : value & ((uint64_t{1} << (4 * digits)) - 1);
        tokens.address(prefixes[random() % prefixes.size()], value);
        if (i % 50 == 0) {
            tokens.string(
                fmt::format("{}0x{:x}", prefixes[random() % prefixes.size()], random() % 0x200));
        }
    }
    check_ranks(tokens, rank_pieces(tokens.table));
}

TEST_CASE("heapkit::rank_pieces when one prefix's \"0x\" starts another's") {
    Tokens tokens;
    // "a+0x" starts "a+0x1+0x" (a module named "a+0x1"): sorted as spelled.
    for (const char* prefix : {"a+", "a+0x1+", "", "0x+"}) {
        for (uint64_t value : tricky_values) {
            tokens.address(prefix, value);
        }
    }
    tokens.string("a+0x1");
    check_ranks(tokens, rank_pieces(tokens.table));
}
