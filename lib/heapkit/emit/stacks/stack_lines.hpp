// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/stacks/piece_ranks.hpp"
#include "heapkit/emit/stacks/token_table.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/util/pod_vector.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

// What write_folded builds its lines from: frame texts interned once as tokens, and
// stack lines grouped, compared and spelled from tokens, so that no line exists as a
// string of its own before it is written out.
//
// How lines are sorted without spelling them. The output must be sorted bytewise as
// spelled ("a;b 1" before "a;bc 1"). A line is a sequence of pieces: every frame text
// followed by ';', and the last one without it. Since no frame text holds ';' (it is
// shown as ':'), comparing two lines byte by byte gives the same answer as comparing
// their pieces one by one, each piece by its rank among all distinct pieces sorted
// bytewise. So:
//   1. every token gets two ranks, one as an inner piece ("text;") and one as the last
//      piece ("text"), equal pieces alike (piece_ranks.hpp: unnamed locations' texts are
//      ranked from their addresses, never spelled);
//   2. each line's first pieces' ranks (+1, 0 meaning "ended") are packed into a 64-bit
//      key (key_of), so most comparisons are one integer comparison;
//   3. lines with equal keys are compared rank by rank from where the key stopped
//      (compare), never touching their bytes.
// On a 1M-stack dump this replaced a string per line (commit 8eaf322): peak RSS 408 ->
// 168 MiB, user time 2.6 -> 0.6 s, output unchanged. tests/unit/test_emit_stacks_folded_writer.cpp
// checks it against a string-per-line reference on random profiles.
namespace heapkit {

// Every location's frames as tokens, innermost first: location l has the entries
// [first_of(l), end_of(l)) of `tokens`, `allocator` and `standard`.
struct LocationTokens {
    // Every location is shown by its address alone (none is named, or FrameStyle::address):
    // its one entry is its own index, and so is its token (TokenTable's address tokens
    // are location indexes), so `first` and `tokens` stay empty. A dump whose addresses go
    // unnamed has tens of millions of locations: they took 8 bytes each.
    bool by_address = false;
    std::vector<uint32_t> first; // one per location, and one past the last
    std::vector<uint32_t> tokens;
    std::vector<bool> allocator; // an allocator frame (cut with everything leafward)
    std::vector<bool> standard;  // a standard library's (cut at the leaf end, after those)

    uint32_t first_of(uint32_t location) const { return by_address ? location : first[location]; }
    uint32_t end_of(uint32_t location) const {
        return by_address ? location + 1 : first[location + 1];
    }
    uint32_t token(uint32_t entry) const { return by_address ? entry : tokens[entry]; }
    size_t entries() const { return allocator.size(); }
};

// One output line before it is spelled; 24 bytes, as there may be millions.
struct StackLine {
    uint32_t sample;  // index into Profile::samples: one of the samples printed on this line
    uint32_t kept;    // frames printed, counted from the root
    int64_t value;    // summed over the line's samples
    uint64_t key = 0; // LineSpeller::key_of: the order of the line's first pieces
};

// Samples with the same locations and thread: open addressing over sample indexes, the
// keys being the samples' ranges of Profile::sample_locations (nothing copied).
class SampleGroups {
public:
    // With `threads` (`dumps`), samples of different threads (dumps) are different lines.
    SampleGroups(const Profile& profile, bool threads, bool dumps = false);

    // Adds sample `s`'s `value` to its line, starting one when new; returns the line's
    // index in take()'s lines.
    uint32_t add(uint32_t s, int64_t value);
    // Starts loading the slot add(s) looks at first: a cache miss per sample in the
    // table of a big profile, which samples asked a few ahead overlap.
    void prefetch(uint32_t s) const { __builtin_prefetch(&m_slots[hash(s)]); }
    PodVector<StackLine> take() { return std::move(m_lines); }

private:
    int32_t thread_of(uint32_t s) const { return m_threads ? m_profile.samples[s].thread : -1; }
    uint32_t dump_of(uint32_t s) const { return m_dumps ? m_profile.samples[s].dump : 0; }
    size_t hash(uint32_t s) const;

    const Profile& m_profile;
    bool m_threads;
    bool m_dumps;
    PodVector<StackLine> m_lines;
    PodVector<uint32_t> m_slots; // index into m_lines + 1; 0 for an empty slot (huge pages)
    unsigned m_shift = 64;
};

// Compares and spells StackLines from their tokens: root first, frames joined by ';',
// preceded by the dump frame (with `dump_tokens`: one per dump) and then the thread frame
// (with `thread_tokens`: one per thread label). Leading empty texts add nothing, not even
// a separator.
class LineSpeller {
public:
    LineSpeller(const Profile& profile, const LocationTokens& layout, const TokenTable& tokens,
                std::vector<uint32_t> thread_tokens, std::vector<uint32_t> dump_tokens = {});

    bool empty(const StackLine& line) const;
    // The ranks of the line's first pieces packed into one number (as many as fit), after
    // skipping `skip` pieces: lines with different keys compare as their keys do, so most
    // comparisons stop there.
    uint64_t key_of(const StackLine& line, size_t skip = 0) const;
    // Sorts `lines` as compare() orders them, by keys only: lines whose keys tie are
    // sorted by their next key, and so on (an MSD radix sort over keys). Deep stacks
    // share their root frames, and comparing them piece by piece in std::sort walked the
    // shared part at every comparison. Leaves in `key` the last key each line was sorted
    // by: lines that spell alike end with equal keys.
    void sort(std::span<StackLine> lines) const;
    // <0, 0, >0 as the spelled lines compare bytewise; `key`s set.
    int compare(const StackLine& a, const StackLine& b) const;
    // The line's text into `out` (replacing what it held), in one walk of its tokens: an
    // unnamed location's text is read from the location, a cache miss in a big profile,
    // which a length first and the bytes after took twice.
    void spell(const StackLine& line, std::string& out) const;

    // What a walk over many lines reads of each line's locations.
    enum class Reads { ranks, texts };
    // Calls `visit` on each of `lines` in order, until it returns false, while what it
    // reads of lines a few ahead is loaded: the line's sample, then its location ids,
    // then their ranks (to key) or the locations (to spell); where some locations are
    // named, their layout entries instead. In a big profile each is a cache miss in no
    // order of the lines (issue 47).
    template <class Line, class Visit>
    void visit_ahead(std::span<Line> lines, Reads reads, Visit visit) const {
        constexpr size_t sample_ahead = 24;
        constexpr size_t ids_ahead = 16;
        constexpr size_t locations_ahead = 8;
        for (size_t i = 0; i < lines.size(); ++i) {
            if (i + sample_ahead < lines.size()) {
                __builtin_prefetch(&m_profile.samples[lines[i + sample_ahead].sample]);
            }
            if (i + ids_ahead < lines.size()) {
                prefetch_ids(lines[i + ids_ahead]);
            }
            if (i + locations_ahead < lines.size()) {
                prefetch_locations(lines[i + locations_ahead], reads);
            }
            if (!visit(lines[i])) {
                return;
            }
        }
    }

private:
    class Cursor;

    void prefetch_ids(const StackLine& line) const;
    void prefetch_locations(const StackLine& line, Reads reads) const;

    const Profile& m_profile;
    const LocationTokens& m_layout;
    const TokenTable& m_tokens;
    std::vector<uint32_t> m_thread_tokens; // per thread label
    std::vector<uint32_t> m_dump_tokens;   // per dump
    // Per token, its rank as an inner piece and as the last piece (see the top of this file).
    std::vector<TokenRanks> m_ranks;
    std::vector<bool> m_empty; // per token: its text is ""
    unsigned m_key_bits = 0;   // per piece in a key
    unsigned m_key_pieces = 0; // pieces in a key
};

} // namespace heapkit
