// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/stack_lines.hpp"

#include "heapkit/emit/stacks/piece_ranks.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

namespace heapkit {

SampleGroups::SampleGroups(const Profile& profile, bool threads, bool dumps)
    : m_profile(profile)
    , m_threads(threads)
    , m_dumps(dumps) {
    if (profile.samples.size() >= std::numeric_limits<uint32_t>::max() / 2) {
        throw std::length_error("more than 2^31 samples");
    }
    // At most three quarters full: a slot is 4 bytes, a line 24, and 10 M all-unique
    // stacks' table took 128 MiB half full (issue 47).
    size_t size = 16;
    while (3 * size < 4 * profile.samples.size()) {
        size *= 2;
    }
    m_slots.resize(size, 0);
    m_shift = 64 - static_cast<unsigned>(__builtin_ctzll(size));
}

size_t SampleGroups::hash(uint32_t s) const {
    uint64_t h = static_cast<uint32_t>(thread_of(s)) ^ static_cast<uint64_t>(dump_of(s)) << 32;
    for (uint32_t location : m_profile.locations_of(m_profile.samples[s])) {
        h = (h ^ location) * 0x9e3779b97f4a7c15u;
    }
    return static_cast<size_t>((h * 0x9e3779b97f4a7c15u) >> m_shift);
}

uint32_t SampleGroups::add(uint32_t s, int64_t value) {
    std::span<const uint32_t> locations = m_profile.locations_of(m_profile.samples[s]);
    size_t mask = m_slots.size() - 1;
    for (size_t i = hash(s);; i = (i + 1) & mask) {
        if (m_slots[i] == 0) {
            m_lines.push_back(StackLine{s, 0, value, 0});
            m_slots[i] = static_cast<uint32_t>(m_lines.size());
            return m_slots[i] - 1;
        }
        StackLine& line = m_lines[m_slots[i] - 1];
        std::span<const uint32_t> other = m_profile.locations_of(m_profile.samples[line.sample]);
        if (thread_of(line.sample) == thread_of(s) && dump_of(line.sample) == dump_of(s) &&
            std::equal(locations.begin(), locations.end(), other.begin(), other.end())) {
            int64_t sum = 0;
            line.value = __builtin_add_overflow(line.value, value, &sum)
                             ? std::numeric_limits<int64_t>::max()
                             : sum;
            return m_slots[i] - 1;
        }
    }
}

// A line's tokens, root first, leading empty texts skipped.
class LineSpeller::Cursor {
public:
    Cursor(const LineSpeller& speller, const StackLine& line)
        : m_speller(speller)
        , m_locations(speller.m_profile.locations_of(speller.m_profile.samples[line.sample]))
        , m_thread(speller.m_thread_tokens.empty() ? -1
                                                   : speller.m_profile.samples[line.sample].thread)
        , m_dump(speller.m_dump_tokens.empty()
                     ? -1
                     : static_cast<int64_t>(speller.m_profile.samples[line.sample].dump))
        , m_location(m_locations.size())
        , m_left(line.kept) {}

    // The next token, or false at the end of the line.
    bool next(uint32_t& token) {
        while (raw_next(token)) {
            if (m_started || !m_speller.m_empty[token]) {
                m_started = true;
                return true;
            }
        }
        return false;
    }

private:
    bool raw_next(uint32_t& token) {
        if (m_dump >= 0) {
            token = m_speller.m_dump_tokens[static_cast<size_t>(m_dump)];
            m_dump = -1;
            return true;
        }
        if (m_thread >= 0) {
            token = m_speller.m_thread_tokens[static_cast<size_t>(m_thread)];
            m_thread = -1;
            return true;
        }
        const LocationTokens& layout = m_speller.m_layout;
        while (m_left > 0) {
            if (m_token == m_lowest) { // on to the next location leafward
                uint32_t location = m_locations[--m_location];
                m_lowest = layout.first_of(location);
                m_token = layout.end_of(location);
                continue;
            }
            --m_left;
            token = layout.token(--m_token); // outer function before what it inlined
            return true;
        }
        return false;
    }

    const LineSpeller& m_speller;
    std::span<const uint32_t> m_locations;
    int32_t m_thread;
    int64_t m_dump;
    size_t m_location; // index into m_locations, counting down from the root
    uint32_t m_left;
    uint32_t m_token = 0; // one past the next token of the current location
    uint32_t m_lowest = 0;
    bool m_started = false;
};

LineSpeller::LineSpeller(const Profile& profile, const LocationTokens& layout,
                         const TokenTable& tokens, std::vector<uint32_t> thread_tokens,
                         std::vector<uint32_t> dump_tokens)
    : m_profile(profile)
    , m_layout(layout)
    , m_tokens(tokens)
    , m_thread_tokens(std::move(thread_tokens))
    , m_dump_tokens(std::move(dump_tokens))
    , m_empty(tokens.size()) {
    PieceRanks ranks = rank_pieces(tokens);
    m_ranks = std::move(ranks.of_token);
    for (uint32_t token = 0; token < tokens.size(); ++token) {
        m_empty[token] = !tokens.is_address(token) && tokens.string_text(token).empty();
    }
    // Ranks go into keys plus one: 0 stands for "the line has ended".
    m_key_bits = static_cast<unsigned>(std::bit_width(ranks.count));
    m_key_pieces = m_key_bits == 0 ? 0 : 64 / m_key_bits;
}

uint64_t LineSpeller::key_of(const StackLine& line, size_t skip) const {
    if (m_key_pieces == 0) {
        return 0; // no tokens at all
    }
    Cursor cursor(*this, line);
    uint64_t key = 0;
    uint32_t token = 0;
    bool more = cursor.next(token);
    for (size_t s = 0; s < skip && more; ++s) {
        more = cursor.next(token);
    }
    for (unsigned p = 0; p < m_key_pieces; ++p) {
        uint64_t piece = 0;
        if (more) {
            uint32_t next = 0;
            more = cursor.next(next);
            piece = uint64_t{more ? m_ranks[token].inner : m_ranks[token].last} + 1;
            token = next;
        }
        key = key << m_key_bits | piece;
    }
    return key << (64 - m_key_pieces * m_key_bits);
}

void LineSpeller::sort(std::span<StackLine> lines) const {
    if (m_key_pieces == 0) {
        return;
    }
    // The last piece of a key is 0 when the line ended within it: a run of equal such
    // keys is of lines that spell alike.
    unsigned last_shift = 64 - m_key_pieces * m_key_bits;
    uint64_t last_mask = ((uint64_t{1} << m_key_bits) - 1) << last_shift;
    auto by_key = [](const StackLine& a, const StackLine& b) { return a.key < b.key; };
    // Runs to sort, with the pieces their keys skip; a stack, not recursion.
    std::vector<std::pair<std::span<StackLine>, size_t>> runs{{lines, 0}};
    while (!runs.empty()) {
        // Not a structured binding: clang 14 (the fuzzing build's) cannot capture one.
        std::span<StackLine> run = runs.back().first;
        size_t skip = runs.back().second;
        runs.pop_back();
        visit_ahead(run, Reads::ranks, [&](StackLine& line) {
            line.key = key_of(line, skip);
            return true;
        });
        std::sort(run.begin(), run.end(), by_key);
        for (size_t first = 0; first < run.size();) {
            size_t end = first + 1;
            while (end < run.size() && run[end].key == run[first].key) {
                ++end;
            }
            if (end - first > 1 && (run[first].key & last_mask) != 0) {
                runs.emplace_back(run.subspan(first, end - first), skip + m_key_pieces);
            }
            first = end;
        }
    }
}

void LineSpeller::prefetch_ids(const StackLine& line) const {
    std::span<const uint32_t> ids = m_profile.locations_of(m_profile.samples[line.sample]);
    if (!ids.empty()) {
        __builtin_prefetch(&ids.front());
        __builtin_prefetch(&ids.back());
    }
}

void LineSpeller::prefetch_locations(const StackLine& line, Reads reads) const {
    for (uint32_t location : m_profile.locations_of(m_profile.samples[line.sample])) {
        if (!m_layout.by_address) {
            __builtin_prefetch(&m_layout.first[location]);
        } else if (reads == Reads::ranks) {
            __builtin_prefetch(&m_ranks[location]); // its token is its index
        } else {
            __builtin_prefetch(&m_profile.locations[location]);
        }
    }
}

bool LineSpeller::empty(const StackLine& line) const {
    uint32_t token = 0;
    return !Cursor(*this, line).next(token);
}

int LineSpeller::compare(const StackLine& a, const StackLine& b) const {
    if (a.key != b.key) {
        return a.key < b.key ? -1 : 1;
    }
    Cursor left(*this, a);
    Cursor right(*this, b);
    uint32_t l = 0;
    uint32_t r = 0;
    bool has_left = left.next(l);
    bool has_right = right.next(r);
    while (has_left && has_right) {
        uint32_t l_next = 0;
        uint32_t r_next = 0;
        bool more_left = left.next(l_next);
        bool more_right = right.next(r_next);
        uint32_t l_rank = more_left ? m_ranks[l].inner : m_ranks[l].last;
        uint32_t r_rank = more_right ? m_ranks[r].inner : m_ranks[r].last;
        if (l_rank != r_rank) {
            return l_rank < r_rank ? -1 : 1;
        }
        if (!more_left) {
            return 0; // equal ranks, equal pieces: both lines end here
        }
        l = l_next;
        r = r_next;
    }
    return static_cast<int>(has_left) - static_cast<int>(has_right);
}

void LineSpeller::spell(const StackLine& line, std::string& out) const {
    out.clear();
    Cursor cursor(*this, line);
    bool first = true;
    for (uint32_t token = 0; cursor.next(token); first = false) {
        if (!first) {
            out += ';';
        }
        m_tokens.append(token, out);
    }
}

} // namespace heapkit
