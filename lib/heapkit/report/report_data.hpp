// SPDX-License-Identifier: MIT
// The HTML report's data: every profile's stacks as the other views spell them (allocator
// frames cut, clones merged, unnamed frames as module!0xSTART), kept compact as a
// prefix tree of frames over one string table, with one column of values per profile and
// sample type. The page (report_tree.js) merges frames by function name as --text and the
// flame graph do, and keeps lines apart for tooltips and the source view.
#pragma once

#include "heapkit/emit/flame/tables.hpp"
#include "heapkit/emit/options.hpp"
#include "heapkit/model/profile.hpp"
#include "heapkit/report/first_paint.hpp"
#include "heapkit/report/prefix_children.hpp"
#include "heapkit/report/source_excerpts.hpp"
#include "heapkit/util/error.hpp"
#include "heapkit/util/pod_vector.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace heapkit {

class ReportData {
public:
    // Frames are spelled as `folded` says (its style is taken as FrameStyle::function:
    // lines are kept apart, not spelled into names).
    explicit ReportData(const FoldedOptions& folded);

    // Adds `profile`'s stacks as a new column, with one value per stack for each of
    // `types`. Columns are the profiles in the order added.
    Result<void> add_profile(const Profile& profile, std::span<const SampleType> types);
    // As add_profile, where the page is the last use of `profile`'s stacks: its samples are
    // let go of (page by page) as they are read, so that the tables grow as the samples
    // shrink, where the two were held whole at the writer's peak; its locations and their
    // samples' lists once all are read. Its names, types, sources and notes stay, for the
    // page's header.
    Result<void> add_profile_releasing(Profile& profile, std::span<const SampleType> types);

    uint32_t intern(std::string_view text);

    // Frees the lookups add_profile finds stacks and frames with (on a million stacks, a
    // third of the writer's memory): call once every profile is added.
    void release_indexes();

    // The tables as JSON members (no braces): the source excerpts (source_excerpts.hpp),
    // and "binary", which names where in `bytes` (appended to) the tables are, each as
    // [byte offset, count, "i32", "f64", "u8" (bytes: varints) or "text" (bytes: UTF-8
    // strings, each ended by a NUL)]: "strings" (text), "frames", "frameModules",
    // "parentDistances", "nodeFrames", "functionSteps" (function_tree.hpp), "leaves", and
    // "columns" (per column, per type: int32 where every value fits, else float64).
    // The last use of the data: each table is let go of as it is written.
    void write_json(std::string& out, std::string& bytes, bool source_excerpts = true) &&;

    // Top's first `shown` rows (first_paint.hpp) in the last column, of the `type`-th of
    // add_profile's types.
    TopTable top_table(size_t type, size_t shown) const;

    // The string table, by id.
    const FlameNames& strings() const { return m_strings; }

    // Nodes of the prefix tree: distinct stack prefixes.
    size_t node_count() const { return m_node_frame.size(); }

private:
    // A frame's flags: inlined into the next one; a thread's label (--threads); a dump's
    // label (--label-dumps).
    static constexpr uint32_t inlined_frame = 1;
    static constexpr uint32_t thread_frame = 2;
    static constexpr uint32_t dump_frame = 4;
    // `module`: the string id of the file name of the module the frame is in (0: none).
    uint32_t frame_id(uint32_t name, uint32_t file, uint32_t line, uint32_t flags,
                      uint32_t module = 0);
    using FrameKey = std::array<uint32_t, 5>; // name, file, line, flags, module
    FrameKey key_of_frame(uint32_t id) const;
    // A key's 64-bit hash as FlameChildIndex's two halves (never its empty key).
    static std::pair<uint32_t, uint32_t> hash_halves(const void* bytes, size_t size);
    // Each prefix-tree node's function name (its frame's string id).
    std::vector<uint32_t> node_names() const;
    uint32_t add_frame(const FrameKey& key);
    uint32_t module_of(const Profile& profile, const Location& location);
    uint32_t child(uint32_t parent, uint32_t frame);
    // The leaf index of the stack of `path`'s frames (root first), its nodes made on its
    // first walk: a series' dumps hold mostly the same stacks, each found again by its
    // hash and checked up the tree from its leaf, rather than looked up frame by frame.
    uint32_t leaf_of(const std::vector<uint32_t>& path);
    // True when the nodes from `node` up to a root carry `path`'s frames.
    bool holds_path(uint32_t node, const std::vector<uint32_t>& path) const;
    // The most bytes write_json's numeric tables can take.
    size_t tables_bound() const;
    // add_profile's work; `read_once` (the profile's samples, or null) let go of as read.
    Result<void> add_stacks(const Profile& profile, std::span<const SampleType> types,
                            PodVector<Sample>* read_once);
    // The string id of the frame's file; its line noted for the source excerpts.
    uint32_t source_of(const Profile& profile, const Location& location, uint32_t index);

    FoldedOptions m_folded;
    // The strings, each kept once in one array of bytes, and their index by text: a
    // million stacks of unnamed addresses make millions of strings, which a hash map of
    // std::string held in about 100 bytes each (a node, a string and its allocation).
    FlameNames m_strings;
    FlameNameIndex m_string_ids{m_strings};
    // Frames: name, file (string ids), line, flags.
    // PodVectors, grown by remapping, not by copying into twice the room: a million
    // unnamed addresses make millions of frames and names (the 1 M unique dump's 2.4 M
    // frames are 38 MB, which a std::vector's last doubling held twice over for its copy,
    // beside the loaded profile).
    PodVector<uint32_t> m_frames;
    PodVector<uint32_t> m_frame_modules; // per frame: its module's file name (string id)
    // A frame's id by its name: the first frame of each name (per string id). Most names
    // have one frame (every unnamed address is a name of its own), so only a name's other
    // frames go to the index below.
    PodVector<uint32_t> m_first_frame_of_name;
    // A frame's index by its key's (name, file, line, flags, module) 64-bit hash, over flat
    // arrays (millions of frames: no node each), the key checked against the frame found;
    // the rare frame whose hash another holds is in m_frame_collisions.
    FlameChildIndex m_frame_of_hash;
    std::map<FrameKey, uint32_t> m_frame_collisions;
    std::vector<int32_t> m_node_parent; // -1 for a root
    std::vector<uint32_t> m_node_frame;
    // Open-addressed over flat arrays (a million stacks make millions of nodes):
    PrefixChildren m_children;            // (parent + 1, frame) -> node
    FlameChildIndex m_leaf_of_path;       // a path's hash (its two halves) -> its leaf
    std::vector<uint32_t> m_leaves;       // nodes where some stack ends
    std::vector<uint32_t> m_leaf_of_node; // per node: its leaf, or FlameChildIndex::none
    // Per column (profile), per type, per leaf; leaves added later are 0 in earlier columns.
    std::vector<std::vector<std::vector<int64_t>>> m_columns;
    std::map<uint32_t, SourceFile> m_sources; // by the string id of the file's name
};

// `text` as a JSON string (quotes included), safe inside an HTML <script> element.
void append_json_string(std::string& out, std::string_view text);

} // namespace heapkit
