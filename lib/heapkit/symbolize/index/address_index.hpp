// SPDX-License-Identifier: MIT
// One build's names for every address of its executable code, as one file read by binary
// search where it lies (mapped), without DWARF, libdw or the symbol tables: the answer
// of ElfModule::frames_at for each range of ELF vaddrs over which it does not change.
// Built once per build id (address_index_builder.hpp), kept in the tools' cache
// (index_store.hpp).
//
// The file, native byte order (a cache lives on the machine that wrote it):
//   header (64 bytes): magic, version, byte order mark, flags, the build id's text, and
//     the counts of the sections that follow, in this order:
//   ranges:  {u64 start vaddr, u32 first chain entry, u32 chain length}, by start; the
//            last one only ends its predecessor (its chain is empty). A range holds
//            [start, next start).
//   chains:  u32 frame indexes: a range's frames, innermost first.
//   frames:  {u32 name, u32 system_name, u32 file (text indexes), u32 line, column,
//            start_line}: each distinct frame once.
//   texts:   {u32 offset, u32 length} into the text bytes; then the text bytes.
// Every read is checked against the section it reads: a damaged or hostile file gives an
// error or an empty answer, never a read outside the bytes.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/util/error.hpp"

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace heapkit {

// Bump when the format or what ElfModule::frames_at answers changes: files of another
// version are rebuilt.
constexpr uint32_t address_index_version = 2;

// The frames from `start` (ELF vaddr) up to the next range's start.
struct AnsweredRange {
    uint64_t start;
    std::vector<Frame> frames; // innermost first; empty: nothing names these addresses
};

// Writes an index file range by range, each distinct text and frame kept once, a range
// that answers as the one before it joined to it: memory in proportion to the file, not
// to the frames asked for.
class AddressIndexWriter {
public:
    // How the frames' texts given to add() live. transient: they may go once add()
    // returns. pooled: each stays at its address, unchanged, until finish() (interned in
    // a pool that outlives the writer), and is found by its address before its bytes are
    // hashed: an index of a big module looks up millions of texts.
    enum class Texts { transient, pooled };

    // `dwarf`: the answers come from DWARF (else symbol tables alone).
    AddressIndexWriter(std::string_view build_id, bool dwarf, Texts texts = Texts::transient);

    // The frames from ELF vaddr `start` (above the previous range's) to the next start.
    void add(uint64_t start, std::span<const Frame> frames);

    // The file, the last range ending at `end`. Once: the writer lets go of what it
    // held as it copies it.
    std::string finish(uint64_t end);

private:
    struct FrameKey {
        uint32_t fields[6]; // name, system_name, file (text indexes), line, column, start_line
        bool operator==(const FrameKey&) const = default;
    };
    struct FrameKeyHash {
        size_t operator()(const FrameKey& key) const;
    };
    struct PooledText {
        size_t size;
        uint32_t id;
    };
    uint32_t text(std::string_view value);
    uint32_t text_by_bytes(std::string_view value);

    bool m_dwarf;
    bool m_pooled;
    std::unordered_map<const char*, PooledText> m_pooled_ids; // Texts::pooled: by address
    std::deque<std::string> m_texts; // owned (the frames' need not outlive add()); never move
    std::unordered_map<std::string_view, uint32_t> m_text_ids; // views m_texts' strings
    std::vector<FrameKey> m_frames;
    std::unordered_map<FrameKey, uint32_t, FrameKeyHash> m_frame_ids;
    std::string m_ranges;
    std::vector<uint32_t> m_chains;
    std::vector<uint32_t> m_last;  // the previous range's chain
    std::vector<uint32_t> m_chain; // the current one's
    bool m_any = false;
};

// The file for `build_id`'s `ranges` (by start, non-overlapping), the last of them
// ending at `end`, through AddressIndexWriter.
std::string encode_address_index(std::string_view build_id, bool dwarf,
                                 std::span<const AnsweredRange> ranges, uint64_t end);

// A view of an index file's bytes (borrowed: they must outlive it).
class AddressIndex {
public:
    // The index in `bytes`, or why they are not one of this version: `name` (the file's
    // path) begins the message.
    static Result<AddressIndex> open(std::string_view bytes, std::string_view name);

    std::string_view build_id() const { return m_build_id; }
    bool dwarf() const { return m_dwarf; }
    size_t range_count() const { return m_range_count; }

    // The frames at ELF vaddr `vaddr`, innermost first, their texts viewing the bytes;
    // empty when nothing names it. nullopt when a reference on the way is out of bounds
    // (the file is damaged).
    std::optional<std::vector<Frame>> frames_at(uint64_t vaddr) const;

    // The start of range `i` (< range_count()): for tests that walk every range.
    uint64_t range_start(size_t i) const;

private:
    struct Range {
        uint64_t start;
        uint32_t first;
        uint32_t length;
    };
    Range range(size_t i) const;
    bool text(uint32_t index, std::string_view& out) const;
    bool frame(uint32_t index, Frame& out) const;

    std::string_view m_bytes;
    std::string_view m_build_id;
    bool m_dwarf = false;
    size_t m_range_count = 0;
    size_t m_chain_count = 0;
    size_t m_frame_count = 0;
    size_t m_text_count = 0;
    size_t m_ranges = 0; // byte offsets of the sections
    size_t m_chains = 0;
    size_t m_frames = 0;
    size_t m_texts = 0;
    size_t m_text_bytes = 0;
};

} // namespace heapkit
