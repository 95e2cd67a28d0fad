// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/piece_ranks.hpp"

#include <algorithm>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace heapkit;

namespace {

// Tokens and the texts they must spell, made here with fmt, not by TokenTable. Addresses
// become locations, one module per address() call's (prefix, bias): the table reads them
// from the locations, each less its module's bias; "" is no module's.
struct Tokens {
    std::vector<std::pair<std::string, uint64_t>> modules;
    std::vector<Location> locations;
    std::vector<bool> shown; // per location: added to the table
    std::vector<std::string> strings;
    std::vector<std::string> texts; // per location, then per string token
    std::optional<TokenTable> table;

    void string(const std::string& text) { strings.push_back(text); }
    void address(const std::string& prefix, uint64_t value, uint64_t bias = 0, bool show = true) {
        uint32_t module = no_module;
        if (!prefix.empty()) {
            auto it = std::find(modules.begin(), modules.end(), std::pair(prefix, bias));
            module = static_cast<uint32_t>(it - modules.begin());
            if (it == modules.end()) {
                modules.emplace_back(prefix, bias);
            }
        }
        locations.push_back(Location{value + bias, {}, module, false});
        shown.push_back(show);
        texts.push_back(fmt::format("{}0x{:x}", prefix, value));
    }
    const TokenTable& build() {
        table.emplace(locations);
        table->spell_module(no_module, table->intern_prefix(""), 0);
        for (uint32_t m = 0; m < modules.size(); ++m) {
            table->spell_module(m, table->intern_prefix(modules[m].first), modules[m].second);
        }
        for (uint32_t l = 0; l < locations.size(); ++l) {
            if (shown[l]) {
                table->add_address(l);
            }
        }
        for (const std::string& text : strings) {
            if (table->intern(text) == texts.size()) {
                texts.push_back(text);
            }
        }
        return *table;
    }
};

// The truth: every piece ("text;" and "text") of the shown tokens spelled, sorted as
// strings, ranked by place among the distinct ones.
void check_ranks(const Tokens& tokens, const PieceRanks& ranks) {
    auto shown = [&](uint32_t t) { return t >= tokens.shown.size() || tokens.shown[t]; };
    std::vector<std::string> pieces;
    for (uint32_t t = 0; t < tokens.texts.size(); ++t) {
        if (shown(t)) {
            pieces.push_back(tokens.texts[t] + ";");
            pieces.push_back(tokens.texts[t]);
        }
    }
    std::sort(pieces.begin(), pieces.end());
    pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
    auto rank = [&](const std::string& piece) {
        return static_cast<uint32_t>(std::lower_bound(pieces.begin(), pieces.end(), piece) -
                                     pieces.begin());
    };
    REQUIRE(ranks.of_token.size() == tokens.texts.size());
    CHECK(ranks.count == pieces.size());
    for (uint32_t t = 0; t < tokens.texts.size(); ++t) {
        if (!shown(t)) {
            continue;
        }
        CAPTURE(tokens.texts[t]);
        REQUIRE(tokens.table->text(t) == tokens.texts[t]);
        CHECK(ranks.of_token[t].inner == rank(tokens.texts[t] + ";"));
        CHECK(ranks.of_token[t].last == rank(tokens.texts[t]));
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
    // Equal texts from modules of one name and other biases; locations never shown (a
    // named one's address), whose texts must take no rank.
    for (uint64_t value : {0x1a2b, 0x1a, 0x9999a, 0x1b}) {
        tokens.address("a+", value, 0x7f0000000000);
        tokens.address("a+", value, 0xffffffffffff0000); // past 2^64 and round
        tokens.address("", value + 0x3, 0, false);
        tokens.address("zz+", value, 0x1000, false);
    }
    // A prefix whose values all have at most 15 digits: sorted by one number each.
    for (uint64_t value : tricky_values) {
        if (value < uint64_t{1} << 60) {
            tokens.address("k+", value);
        }
    }
    tokens.string("after the addresses");
    const TokenTable& table = tokens.build();
    check_ranks(tokens, rank_pieces(table));
    check_ranks(tokens, rank_pieces_spelled(table));
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
        tokens.address("k+", value >> 4); // at most 15 digits: sorted by one number each
        if (i % 50 == 0) {
            tokens.string(
                fmt::format("{}0x{:x}", prefixes[random() % prefixes.size()], random() % 0x200));
        }
    }
    check_ranks(tokens, rank_pieces(tokens.build()));
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
    check_ranks(tokens, rank_pieces(tokens.build()));
}
