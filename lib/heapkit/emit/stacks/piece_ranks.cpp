// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/piece_ranks.hpp"

#include "heapkit/util/huge_pages.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <numeric>
#include <span>
#include <string>
#include <string_view>

namespace heapkit {

namespace {

// Piece 2t is "text;" of token t, piece 2t + 1 is "text".
std::string_view spell_piece(const TokenTable& tokens, uint32_t piece, std::string& buffer) {
    uint32_t token = piece / 2;
    buffer.resize(tokens.length(token) + 1);
    char* end = tokens.write(token, buffer.data());
    if (piece % 2 == 0) {
        *end++ = ';';
    }
    return {buffer.data(), static_cast<size_t>(end - buffer.data())};
}

// Ranks given in bytewise order of the pieces, equal pieces alike.
class RankWriter {
public:
    explicit RankWriter(size_t tokens) { resize_on_huge_pages(m_ranks.of_token, tokens); }
    // The next piece, greater than the one before unless `same`.
    void next(uint32_t piece, bool same = false) {
        if (!same || m_ranks.count == 0) {
            ++m_ranks.count;
        }
        TokenRanks& ranks = m_ranks.of_token[piece / 2];
        (piece % 2 == 0 ? ranks.inner : ranks.last) = m_ranks.count - 1;
    }
    // Starts loading `token`'s ranks, written soon in no order of tokens.
    void prefetch(uint32_t token) const { __builtin_prefetch(&m_ranks.of_token[token]); }
    // Token `copy` spells as `token` does: the same ranks.
    void alias(uint32_t copy, uint32_t token) { m_ranks.of_token[copy] = m_ranks.of_token[token]; }
    PieceRanks take() { return std::move(m_ranks); }

private:
    PieceRanks m_ranks;
};

// An added address token, in the walk's order within its prefix's group (entries are
// grouped by prefix, not ordered by it): as its digits compare. 12 bytes, its value in
// two halves (its sort_key while its group is sorted by keys): tens of millions are
// sorted at once, beside the ranks they make.
struct AddressEntry {
    uint32_t low;
    uint32_t high;
    uint32_t token;

    uint64_t value() const { return uint64_t{high} << 32 | low; }
    unsigned digits() const { return hex_digits(value()); }
    // The value's hex digits left-aligned: digit i in bits 60-4i..63-4i.
    uint64_t left() const { return value() << (64 - 4 * digits()); }
    bool operator<(const AddressEntry& other) const {
        uint64_t mine = left();
        uint64_t theirs = other.left();
        return mine != theirs ? mine < theirs : digits() < other.digits();
    }
};
static_assert(sizeof(AddressEntry) == 12);

class AddressRanker {
public:
    AddressRanker(const TokenTable& tokens, RankWriter& out)
        : m_tokens(tokens)
        , m_out(out) {}

    // False when the prefixes' G's nest: nothing written then.
    bool run() {
        if (!order_groups()) {
            return false;
        }
        sort_strings();
        std::vector<size_t> starts;
        std::vector<AddressEntry> entries = sorted_entries(starts);
        size_t s = 0; // next string piece
        for (size_t group = 0; group + 1 < starts.size(); ++group) {
            if (starts[group] == starts[group + 1]) {
                continue;
            }
            const std::string& g = m_group_texts[group];
            for (; s < m_string_pieces.size() && string_piece(s) < g; ++s) {
                m_out.next(string_piece_id(s));
            }
            m_inside = s;
            while (m_inside < m_string_pieces.size() && string_piece(m_inside).starts_with(g)) {
                ++m_inside;
            }
            m_string = s;
            auto members =
                std::span(entries).subspan(starts[group], starts[group + 1] - starts[group]);
            walk(members);
            copy_duplicates(members, m_out);
            s = m_string; // what is left inside comes after the group's last piece
        }
        for (; s < m_string_pieces.size(); ++s) {
            m_out.next(string_piece_id(s));
        }
        return true;
    }

private:
    // Equal texts, equal ranks: the copies of an address in a group take its first one's.
    static void copy_duplicates(std::span<const AddressEntry> entries, RankWriter& out);

    struct Open {
        uint64_t value;
        unsigned digits;
        uint32_t token;
        bool inner_placed;
    };

    bool order_groups();
    void sort_strings();
    std::vector<AddressEntry> sorted_entries(std::vector<size_t>& starts) const;
    void walk(std::span<const AddressEntry> group);
    void place(uint32_t piece);

    // The s-th string piece in order, and its text.
    uint32_t string_piece_id(size_t s) const {
        uint32_t local = m_string_pieces[s];
        return 2 * m_string_tokens[local / 2] + local % 2;
    }
    std::string_view string_piece(size_t s) const { return local_text(m_string_pieces[s]); }
    std::string_view local_text(uint32_t local) const {
        return std::string_view(m_spelled).substr(m_start[local / 2],
                                                  m_length[local / 2] + 1 - local % 2);
    }

    const TokenTable& m_tokens;
    RankWriter& m_out;
    std::vector<uint32_t> m_group_of_prefix;
    std::vector<std::string> m_group_texts; // by group: its prefix's text and "0x"
    // The string tokens, their texts and a ';' each in one string, and their pieces
    // sorted: piece 2i ("text;") and 2i + 1 ("text") of m_string_tokens[i].
    std::vector<uint32_t> m_string_tokens;
    std::string m_spelled;
    std::vector<size_t> m_start;    // per string token: its text in m_spelled
    std::vector<uint32_t> m_length; // per string token: its text's length
    std::vector<uint32_t> m_string_pieces;
    size_t m_string = 0; // the next string piece to place
    size_t m_inside = 0; // past the string pieces starting with the group's G
    std::string m_buffer;
};

bool AddressRanker::order_groups() {
    std::vector<uint32_t> prefixes(m_tokens.prefix_count());
    std::vector<std::string> texts(prefixes.size());
    for (uint32_t p = 0; p < prefixes.size(); ++p) {
        prefixes[p] = p;
        texts[p] = m_tokens.prefix_text(p) + "0x";
    }
    std::sort(prefixes.begin(), prefixes.end(),
              [&](uint32_t a, uint32_t b) { return texts[a] < texts[b]; });
    // In sorted order a text that starts another starts the one after it.
    for (size_t i = 1; i < prefixes.size(); ++i) {
        if (texts[prefixes[i]].starts_with(texts[prefixes[i - 1]])) {
            return false;
        }
    }
    m_group_of_prefix.resize(prefixes.size());
    for (uint32_t g = 0; g < prefixes.size(); ++g) {
        m_group_of_prefix[prefixes[g]] = g;
        m_group_texts.push_back(std::move(texts[prefixes[g]]));
    }
    return true;
}

void AddressRanker::sort_strings() {
    for (uint32_t token = m_tokens.first_string(); token < m_tokens.size(); ++token) {
        const std::string& text = m_tokens.string_text(token);
        auto local = static_cast<uint32_t>(m_string_tokens.size());
        m_string_tokens.push_back(token);
        m_start.push_back(m_spelled.size());
        m_length.push_back(static_cast<uint32_t>(text.size()));
        m_spelled += text;
        m_spelled += ';';
        m_string_pieces.push_back(2 * local);
        m_string_pieces.push_back(2 * local + 1);
    }
    std::sort(m_string_pieces.begin(), m_string_pieces.end(),
              [&](uint32_t a, uint32_t b) { return local_text(a) < local_text(b); });
}

// A value below 2^60 (at most 15 hex digits) as one number that sorts as AddressEntry
// does: its digits left-aligned, their count less one in the low 4 bits, which the
// digits leave free. The sort compares one number, not two made at each comparison.
uint64_t sort_key(uint64_t value) {
    unsigned digits = hex_digits(value);
    return value << (64 - 4 * digits) | (digits - 1);
}

uint64_t value_of_key(uint64_t key) {
    return key >> (64 - 4 * ((key & 0xf) + 1));
}

constexpr uint64_t keyed_values = uint64_t{1} << 60; // values below it have a sort_key

// Sorts entries holding sort keys by them: an MSD radix sort in place (American flag
// sort) on the first byte where their keys differ, each bucket then sorted alike, small
// ones by std::sort. Tens of millions of addresses of one module share their first
// digits: std::sort's comparisons were the ranking's time (issue 47).
void sort_by_key(std::span<AddressEntry> entries) {
    if (entries.size() < 256) {
        std::sort(entries.begin(), entries.end(), [](const AddressEntry& a, const AddressEntry& b) {
            return a.value() < b.value();
        });
        return;
    }
    uint64_t any = 0;
    uint64_t all = ~uint64_t{0};
    for (const AddressEntry& entry : entries) {
        any |= entry.value();
        all &= entry.value();
    }
    if (any == all) {
        return; // all alike
    }
    unsigned shift = (63 - static_cast<unsigned>(std::countl_zero(any ^ all))) / 8 * 8;
    auto byte = [shift](const AddressEntry& entry) { return (entry.value() >> shift) & 0xff; };
    std::array<size_t, 257> start{};
    for (const AddressEntry& entry : entries) {
        ++start[byte(entry) + 1];
    }
    std::partial_sum(start.begin(), start.end(), start.begin());
    std::array<size_t, 256> next{};
    std::copy(start.begin(), start.end() - 1, next.begin());
    for (unsigned b = 0; b < 256; ++b) {
        while (next[b] < start[b + 1]) { // each entry moved straight to its bucket
            AddressEntry entry = entries[next[b]];
            for (uint64_t d = byte(entry); d != b; d = byte(entry)) {
                std::swap(entry, entries[next[d]++]);
            }
            entries[next[b]++] = entry;
        }
    }
    for (unsigned b = 0; b < 256; ++b) {
        sort_by_key(entries.subspan(start[b], start[b + 1] - start[b]));
    }
}

// The added address tokens, group by group (group g's from starts[g] to starts[g + 1]),
// each group sorted: a counting sort by group, then a sort of each, by sort_key when
// every value of the group has one (addresses do: user space ends below 2^57).
std::vector<AddressEntry> AddressRanker::sorted_entries(std::vector<size_t>& starts) const {
    starts.assign(m_group_texts.size() + 1, 0);
    std::vector<bool> keyed(m_group_texts.size(), true);
    for (uint32_t token = 0; token < m_tokens.first_string(); ++token) {
        if (m_tokens.has_address(token)) {
            uint32_t group = m_group_of_prefix[m_tokens.address_prefix(token)];
            ++starts[group + 1];
            if (m_tokens.address_value(token) >= keyed_values) {
                keyed[group] = false;
            }
        }
    }
    std::partial_sum(starts.begin(), starts.end(), starts.begin());
    std::vector<AddressEntry> entries; // the radix sort writes into 256 places at once
    resize_on_huge_pages(entries, starts.back());
    std::vector<size_t> next(starts.begin(), starts.end() - 1);
    for (uint32_t token = 0; token < m_tokens.first_string(); ++token) {
        if (m_tokens.has_address(token)) {
            uint32_t group = m_group_of_prefix[m_tokens.address_prefix(token)];
            uint64_t value = m_tokens.address_value(token);
            uint64_t stored = keyed[group] ? sort_key(value) : value;
            entries[next[group]++] = {static_cast<uint32_t>(stored),
                                      static_cast<uint32_t>(stored >> 32), token};
        }
    }
    for (size_t g = 0; g + 1 < starts.size(); ++g) {
        auto first = entries.begin() + static_cast<ptrdiff_t>(starts[g]);
        auto end = entries.begin() + static_cast<ptrdiff_t>(starts[g + 1]);
        if (!keyed[g]) {
            std::sort(first, end);
            continue;
        }
        sort_by_key(std::span(first, end));
        for (auto entry = first; entry != end; ++entry) {
            uint64_t value = value_of_key(entry->value());
            entry->low = static_cast<uint32_t>(value);
            entry->high = static_cast<uint32_t>(value >> 32);
        }
    }
    return entries;
}

// Whether `value` (of `digits` hex digits) spells as `open`'s digits and more.
bool extends(uint64_t value, unsigned digits, uint64_t open_value, unsigned open_digits) {
    return open_digits < digits && value >> (4 * (digits - open_digits)) == open_value;
}

// Of a `value` that extends one of `open_digits`: whether its next digit is a letter.
bool letter_after(uint64_t value, unsigned digits, unsigned open_digits) {
    return (value >> (4 * (digits - open_digits - 1)) & 0xf) >= 10;
}

void AddressRanker::walk(std::span<const AddressEntry> group) {
    std::vector<Open> open; // each extends the one below it: at most 16
    auto close = [&] {
        if (!open.back().inner_placed) {
            place(2 * open.back().token);
        }
        open.pop_back();
    };
    constexpr size_t ahead = 16;
    for (size_t i = 0; i < group.size(); ++i) {
        if (i + ahead < group.size()) {
            m_out.prefetch(group[i + ahead].token);
        }
        const AddressEntry& entry = group[i];
        if (i > 0 && entry.value() == group[i - 1].value()) {
            continue; // a copy: copy_duplicates gives it its ranks
        }
        uint64_t value = entry.value();
        unsigned digits = entry.digits();
        while (!open.empty() && !extends(value, digits, open.back().value, open.back().digits)) {
            close(); // "h;" after all of h's digits' extensions and before what follows h
        }
        if (!open.empty() && !open.back().inner_placed &&
            letter_after(value, digits, open.back().digits)) {
            place(2 * open.back().token); // "h;" between h's extensions by 9 and by a
            open.back().inner_placed = true;
        }
        place(2 * entry.token + 1);
        open.push_back({value, digits, entry.token, false});
    }
    while (!open.empty()) {
        close();
    }
}

// An address piece next in order, after the string pieces inside its G below it.
void AddressRanker::place(uint32_t piece) {
    if (m_string == m_inside) {
        m_out.next(piece);
        return;
    }
    std::string_view text = spell_piece(m_tokens, piece, m_buffer);
    for (; m_string < m_inside && string_piece(m_string) < text; ++m_string) {
        m_out.next(string_piece_id(m_string));
    }
    m_out.next(piece);
    if (m_string < m_inside && string_piece(m_string) == text) {
        m_out.next(string_piece_id(m_string++), true);
    }
}

void AddressRanker::copy_duplicates(std::span<const AddressEntry> entries, RankWriter& out) {
    for (size_t i = 1; i < entries.size(); ++i) {
        if (entries[i].value() == entries[i - 1].value()) {
            out.alias(entries[i].token, entries[i - 1].token);
        }
    }
}

} // namespace

PieceRanks rank_pieces_spelled(const TokenTable& tokens) {
    std::vector<uint32_t> pieces;
    for (uint32_t token = 0; token < tokens.size(); ++token) {
        if (!tokens.is_address(token) || tokens.has_address(token)) {
            pieces.push_back(2 * token);
            pieces.push_back(2 * token + 1);
        }
    }
    std::string a;
    std::string b;
    std::sort(pieces.begin(), pieces.end(), [&](uint32_t x, uint32_t y) {
        return spell_piece(tokens, x, a) < spell_piece(tokens, y, b);
    });
    RankWriter out(tokens.size());
    for (size_t i = 0; i < pieces.size(); ++i) {
        out.next(pieces[i], i > 0 && spell_piece(tokens, pieces[i], a) ==
                                         spell_piece(tokens, pieces[i - 1], b));
    }
    return out.take();
}

PieceRanks rank_pieces(const TokenTable& tokens) {
    RankWriter out(tokens.size());
    if (!AddressRanker(tokens, out).run()) {
        return rank_pieces_spelled(tokens);
    }
    return out.take();
}

} // namespace heapkit
