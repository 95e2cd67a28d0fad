// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace heapkit {

// One build's cached answers: the frames at each vaddr (possibly none: known to be
// unnamed), all stored end to end rather than a vector per address.
class FrameEntries {
public:
    // The frames at `vaddr`, or nullopt when it has no entry.
    std::optional<std::span<const Frame>> find(uint64_t vaddr) const;
    // Adds an entry for `vaddr` unless there is one; true when added.
    bool add(uint64_t vaddr, std::span<const Frame> frames);
    // Adds `other`'s entries for vaddrs that have none here.
    void merge(const FrameEntries& other);
    size_t size() const { return m_ranges.size(); }
    void reserve(size_t entries);

    // Calls `visit(vaddr, frames)` for every entry, in no particular order.
    template <typename Visit> void for_each(Visit&& visit) const {
        for (const auto& [vaddr, range] : m_ranges) {
            visit(vaddr, std::span<const Frame>(m_frames).subspan(range.first, range.count));
        }
    }

private:
    struct Range {
        size_t first;
        uint32_t count;
    };
    std::vector<Frame> m_frames;
    std::unordered_map<uint64_t, Range> m_ranges;
};

// Frames resolved by earlier runs, kept on disk so that the next dump of the same build
// costs lookups instead of a DWARF walk. One file per key: a build id names the bytes
// of a build, so its answers hold wherever and whenever the file is found. The
// symbolizer keeps DWARF answers under the build id itself and symbol-table answers
// under a key of their own (index_store.hpp: cache_key), so has() tells "had DWARF".
//
// Safe under concurrent runs: files are replaced by rename, never written in place, and
// a save merges what other runs wrote since. The directory is kept under `max_bytes` by
// removing the least recently used files. A damaged file is ignored and replaced.
class FrameCache {
public:
    static constexpr uint64_t default_max_bytes = uint64_t{256} << 20;

    // `directory` empty: a cache that holds nothing and writes nothing. Frames found
    // and added keep their texts in `strings`, which must outlive the cache.
    FrameCache(std::string directory, StringPool& strings, uint64_t max_bytes = default_max_bytes);

    // True when a file for `build_id` (any key) exists (it is loaded on first use).
    bool has(const std::string& build_id);

    // The frames cached for ELF vaddr `vaddr` of build `build_id`, if any.
    std::optional<std::span<const Frame>> find(const std::string& build_id, uint64_t vaddr);

    // Remembers frames resolved in this run, for save(). Their texts must live in the
    // cache's `strings`.
    void add(const std::string& build_id, uint64_t vaddr, std::span<const Frame> frames);

    // Writes every build's file that gained entries, then trims the directory. Returns
    // one warning per problem (the cache is an optimization: it never fails a run).
    std::vector<std::string> save();

private:
    struct Build {
        FrameEntries entries;
        bool on_disk = false;
        bool changed = false;
    };
    Build& load(const std::string& build_id);
    std::string path_of(const std::string& build_id) const;
    void trim(std::vector<std::string>& warnings) const;

    std::string m_directory; // the versioned subdirectory holding the files
    uint64_t m_max_bytes;
    StringPool& m_strings;
    std::map<std::string, Build> m_builds;
};

// The on-disk form of one build's entries, exposed for tests and fuzzing.
std::string encode_frame_entries(const FrameEntries& entries);
// nullopt when `bytes` is not a complete file of this format and version. Texts are
// kept in `strings`.
std::optional<FrameEntries> decode_frame_entries(std::string_view bytes, StringPool& strings);

} // namespace heapkit
