// SPDX-License-Identifier: MIT
#include "heapkit/report/report_data.hpp"

#include "heapkit/emit/stacks/dump_labels.hpp"
#include "heapkit/emit/stacks/location_frames.hpp"
#include "heapkit/report/function_tree.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <string_view>
#include <utility>

namespace heapkit {
namespace {

int64_t saturating_add(int64_t a, int64_t b) {
    int64_t sum = 0;
    if (!__builtin_add_overflow(a, b, &sum)) {
        return sum;
    }
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

// One printed frame of a stack: which location's entry in the token layout.
struct Entry {
    uint32_t location;
    uint32_t index; // into location.frames (0 for an unnamed location)
    uint32_t token;
};

} // namespace

void append_json_string(std::string& out, std::string_view text) {
    out.push_back('"');
    for (char c : text) {
        auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(c);
        } else if (byte < 0x20 || c == '<' || c == '>' || c == '&') {
            // "<" as \u003c: no "</script>" nor "<!--" can end the element early.
            fmt::format_to(std::back_inserter(out), "\\u{:04x}", byte);
        } else {
            out.push_back(c);
        }
    }
    out.push_back('"');
}

ReportData::ReportData(const FoldedOptions& folded)
    : m_folded(folded) {
    m_folded.style = FrameStyle::function;
    m_folded.annotate_inline = false;
    intern(""); // string 0: no file
}

uint32_t ReportData::intern(std::string_view text) {
    return m_string_ids.intern(text);
}

void ReportData::release_indexes() {
    m_children = PrefixChildren();
    m_leaf_of_path = FlameChildIndex();
    m_leaf_of_node = {};
    m_first_frame_of_name = {};
    m_frame_of_hash = FlameChildIndex();
    m_frame_collisions = {};
    // Nothing is added from here on: the tables' spare capacity (up to half of each, from
    // growing by doubling) is let go of before the page is made, its peak. The frames'
    // tables are PodVectors, whose spare room was never written to: it holds no memory.
    m_node_parent.shrink_to_fit();
    m_node_frame.shrink_to_fit();
    m_leaves.shrink_to_fit();
}

uint32_t ReportData::frame_id(uint32_t name, uint32_t file, uint32_t line, uint32_t flags,
                              uint32_t module) {
    const FrameKey key{name, file, line, flags, module};
    auto id = static_cast<uint32_t>(m_frames.size() / 4);
    if (m_first_frame_of_name.size() <= name) {
        m_first_frame_of_name.resize(m_strings.size(), FlameChildIndex::none);
    }
    uint32_t& first = m_first_frame_of_name[name];
    if (first == FlameChildIndex::none) {
        first = id;
        return add_frame(key);
    }
    if (key_of_frame(first) == key) {
        return first;
    }
    // A name's other frames (its other lines, files, modules) are found by the key's hash.
    auto [high, low] = hash_halves(key.data(), sizeof key);
    size_t slot = 0;
    uint32_t known = m_frame_of_hash.find(high, low, slot);
    if (known != FlameChildIndex::none) {
        if (key_of_frame(known) == key) {
            return known;
        }
        // Another frame of the same hash holds the entry: this one is looked up apart.
        auto [it, added] = m_frame_collisions.try_emplace(key, id);
        if (!added) {
            return it->second;
        }
    } else {
        m_frame_of_hash.add(high, low, id, slot);
    }
    return add_frame(key);
}

std::pair<uint32_t, uint32_t> ReportData::hash_halves(const void* bytes, size_t size) {
    uint64_t hash =
        std::hash<std::string_view>()(std::string_view(static_cast<const char*>(bytes), size));
    hash -= hash == UINT64_MAX ? 1 : 0; // all ones: FlameChildIndex's empty key
    return {static_cast<uint32_t>(hash >> 32), static_cast<uint32_t>(hash)};
}

std::vector<uint32_t> ReportData::node_names() const {
    std::vector<uint32_t> names(m_node_frame.size());
    for (size_t n = 0; n < names.size(); ++n) {
        names[n] = m_frames[size_t{m_node_frame[n]} * 4];
    }
    return names;
}

ReportData::FrameKey ReportData::key_of_frame(uint32_t id) const {
    const uint32_t* frame = &m_frames[size_t{id} * 4];
    return {frame[0], frame[1], frame[2], frame[3], m_frame_modules[id]};
}

uint32_t ReportData::add_frame(const FrameKey& key) {
    auto id = static_cast<uint32_t>(m_frames.size() / 4);
    m_frames.append(key.data(), 4);
    m_frame_modules.push_back(key[4]);
    return id;
}

uint32_t ReportData::module_of(const Profile& profile, const Location& location) {
    if (location.module >= profile.modules.size()) {
        return 0;
    }
    std::string_view path = profile.modules[location.module].path;
    return intern(path.substr(path.rfind('/') + 1)); // npos + 1 is 0: the whole path
}

uint32_t ReportData::child(uint32_t parent, uint32_t frame) {
    size_t slot = 0;
    auto is_child = [&](uint32_t node) {
        return m_node_frame[node] == frame &&
               static_cast<uint32_t>(m_node_parent[node] + 1) == parent;
    };
    uint32_t node = m_children.find(parent, frame, is_child, slot);
    if (node == PrefixChildren::none) {
        node = static_cast<uint32_t>(m_node_frame.size());
        m_children.add(parent, frame, node, slot);
        m_node_parent.push_back(parent == 0 ? -1 : static_cast<int32_t>(parent - 1));
        m_node_frame.push_back(frame);
        m_leaf_of_node.push_back(FlameChildIndex::none);
    }
    return node;
}

uint32_t ReportData::leaf_of(const std::vector<uint32_t>& path) {
    // Paths are indexed once a second profile is added: a profile's own stacks are all
    // different, and the nodes found child by child below are the same.
    bool indexed = m_columns.size() > 1;
    auto [high, low] = indexed ? hash_halves(path.data(), path.size() * sizeof path[0])
                               : std::pair<uint32_t, uint32_t>{};
    size_t slot = 0;
    uint32_t known = indexed ? m_leaf_of_path.find(high, low, slot) : FlameChildIndex::none;
    if (known != FlameChildIndex::none && holds_path(m_leaves[known], path)) {
        return known;
    }
    uint32_t node = 0; // the root's parent, plus one
    for (uint32_t frame : path) {
        node = child(node, frame) + 1;
    }
    uint32_t& leaf = m_leaf_of_node[node - 1];
    if (leaf == FlameChildIndex::none) {
        leaf = static_cast<uint32_t>(m_leaves.size());
        m_leaves.push_back(node - 1);
    }
    if (indexed && known == FlameChildIndex::none) { // else another path of this hash has it
        m_leaf_of_path.add(high, low, leaf);
    }
    return leaf;
}

bool ReportData::holds_path(uint32_t node, const std::vector<uint32_t>& path) const {
    for (size_t f = path.size(); f-- > 0;) {
        if (m_node_frame[node] != path[f] || (m_node_parent[node] < 0) != (f == 0)) {
            return false;
        }
        node = static_cast<uint32_t>(m_node_parent[node]);
    }
    return true;
}

uint32_t ReportData::source_of(const Profile& profile, const Location& location, uint32_t index) {
    const Frame& frame = location.frames[index];
    uint32_t file = intern(frame.file);
    if (frame.file.empty() || frame.line == 0) {
        return file;
    }
    SourceFile& source = m_sources[file];
    source.name = frame.file;
    source.lines.insert(frame.line);
    if (location.module < profile.modules.size()) {
        std::string_view path = profile.modules[location.module].path;
        size_t slash = path.rfind('/');
        if (slash != std::string_view::npos && slash > 0) {
            source.module_dirs.emplace(path.substr(0, slash));
        }
    }
    return file;
}

Result<void> ReportData::add_profile(const Profile& profile, std::span<const SampleType> types) {
    return add_stacks(profile, types, nullptr);
}

Result<void> ReportData::add_profile_releasing(Profile& profile,
                                               std::span<const SampleType> types) {
    HEAPKIT_TRY(add_stacks(profile, types, &profile.samples));
    profile.samples = {};
    profile.sample_locations = {};
    std::vector<Location>().swap(profile.locations);
    std::vector<LogSample>().swap(profile.log_samples);
    return {};
}

Result<void> ReportData::add_stacks(const Profile& profile, std::span<const SampleType> types,
                                    PodVector<Sample>* read_once) {
    TokenTable tokens(profile.locations);
    LocationTokens layout = location_tokens(profile, m_folded, tokens);
    // Interned in the layout's order, as the tokens were first met: the string table is
    // numbered the same whatever the tokens' ids.
    constexpr uint32_t unmade = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> token_strings(tokens.size(), unmade);
    for (uint32_t e = 0; e < layout.entries(); ++e) {
        if (uint32_t& string = token_strings[layout.token(e)]; string == unmade) {
            string = intern(tokens.text(layout.token(e)));
        }
    }
    std::vector<uint32_t> thread_strings;
    for (const std::string& label : profile.thread_labels) {
        thread_strings.push_back(intern(frame_label(label)));
    }
    std::vector<uint32_t> dump_strings; // --label-dumps: a frame naming each stack's dump
    if (m_folded.dump_frames) {
        for (const std::string& label : dump_labels(profile.sources)) {
            dump_strings.push_back(intern(frame_label(label)));
        }
    }
    auto& column = m_columns.emplace_back(types.size());
    for (std::vector<int64_t>& values : column) {
        // A sample ends at most one new leaf: room a column never outgrows, so it is never
        // copied into twice the room; the room costs no memory until written.
        values.reserve(m_leaves.size() + profile.samples.size());
    }
    // Each printed frame's id, per position in the token layout, made on its first use:
    // stacks share most of their frames, and a frame's id (its name's and file's strings,
    // its source line noted) is the same in every stack. First uses come in the order
    // they did uncached, so the tables are numbered as they were.
    std::vector<uint32_t> frame_at(layout.entries(), unmade);
    std::vector<Entry> entries;
    std::vector<uint32_t> path; // the stack's frames, root first
    std::vector<int64_t> values(types.size());
    // Samples read are let go of in steps of a few MiB (each step one madvise), not the
    // locations they point to: samples may share them.
    constexpr size_t release_step = 1 << 16;
    for (size_t s = 0; s < profile.samples.size(); ++s) {
        if (read_once != nullptr && s % release_step == 0) {
            read_once->release_front(s);
        }
        const Sample& sample = profile.samples[s];
        bool any = false;
        for (size_t t = 0; t < types.size(); ++t) {
            values[t] = value_of(profile, sample, types[t]);
            any = any || values[t] != 0;
        }
        if (!any) {
            continue;
        }
        auto locations = profile.locations_of(sample);
        uint32_t kept =
            kept_frames(profile, layout, locations, m_folded.frames.keep_allocator_frames);
        entries.clear();
        for (size_t l = locations.size(); l-- > 0 && entries.size() < kept;) {
            uint32_t location = locations[l];
            uint32_t first = layout.first_of(location);
            for (uint32_t t = layout.end_of(location); t-- > first && entries.size() < kept;) {
                entries.push_back(Entry{location, t - first, layout.token(t)});
            }
        }
        bool thread = m_folded.thread_frames && sample.thread >= 0 &&
                      static_cast<size_t>(sample.thread) < thread_strings.size();
        bool dump = sample.dump < dump_strings.size();
        if (entries.empty() && !thread && !dump) {
            continue; // nothing left once the allocator frames are cut: no stack
        }
        path.clear();
        if (dump) {
            path.push_back(frame_id(dump_strings[sample.dump], 0, 0, dump_frame));
        }
        if (thread) {
            path.push_back(
                frame_id(thread_strings[static_cast<size_t>(sample.thread)], 0, 0, thread_frame));
        }
        for (const Entry& entry : entries) {
            uint32_t& frame = frame_at[layout.first_of(entry.location) + entry.index];
            if (frame == unmade) {
                const Location& location = profile.locations[entry.location];
                uint32_t name = token_strings[entry.token];
                uint32_t module = module_of(profile, location);
                frame = location.frames.empty()
                            ? frame_id(name, 0, 0, 0, module)
                            : frame_id(name, source_of(profile, location, entry.index),
                                       location.frames[entry.index].line,
                                       entry.index + 1 < location.frames.size() ? inlined_frame : 0,
                                       module);
            }
            path.push_back(frame);
        }
        uint32_t leaf = leaf_of(path);
        for (size_t t = 0; t < types.size(); ++t) {
            if (column[t].size() <= leaf) {
                column[t].resize(leaf + 1);
            }
            column[t][leaf] = saturating_add(column[t][leaf], values[t]);
        }
    }
    return {};
}

TopTable ReportData::top_table(size_t type, size_t shown) const {
    std::vector<uint32_t> names = node_names();
    std::span<const int64_t> values;
    if (!m_columns.empty() && type < m_columns.back().size()) {
        values = m_columns.back()[type];
    }
    return top_rows(m_node_parent, names, m_leaves, values, m_strings, shown);
}

namespace {

// `numbers` as the page reads them in place (report_data.js): little-endian `Out`
// (int32_t or double: an Int32Array or a Float64Array) at the next multiple of 8 bytes of
// `bytes`, named in `json` by its offset and count.
template <class Out, class Numbers>
void append_binary(std::string& json, std::string& bytes, const Numbers& numbers) {
    static_assert(std::endian::native == std::endian::little, "the page reads little-endian");
    bytes.resize((bytes.size() + 7) & ~size_t{7});
    fmt::format_to(std::back_inserter(json), "[{},{},\"{}\"]", bytes.size(), numbers.size(),
                   sizeof(Out) == 4 ? "i32" : "f64");
    size_t at = bytes.size();
    bytes.resize(at + numbers.size() * sizeof(Out));
    for (size_t i = 0; i < numbers.size(); ++i) {
        auto value = static_cast<Out>(numbers[i]);
        std::memcpy(bytes.data() + at + i * sizeof(Out), &value, sizeof value);
    }
}

// `numbers` (each at least 0) as LEB128 varints, seven bits a byte, the low first, the
// high bit set on all but a number's last byte (mostly one byte each: a quarter of the
// bytes to deflate), read by the page as a Uint8Array ("u8", the count in bytes).
void append_varints(std::string& json, std::string& bytes, const std::vector<int32_t>& numbers) {
    size_t at = bytes.size();
    for (int32_t number : numbers) {
        auto left = static_cast<uint32_t>(number);
        for (; left >= 0x80; left >>= 7) {
            bytes.push_back(static_cast<char>((left & 0x7f) | 0x80));
        }
        bytes.push_back(static_cast<char>(left));
    }
    fmt::format_to(std::back_inserter(json), "[{},{},\"u8\"]", at, bytes.size() - at);
}

// The strings as the page reads them in one piece (report_data.js, report_strings.js):
// each one's UTF-8 followed by a NUL, named in `json` as [byte offset, bytes, "text"]. A
// NUL inside a string (hostile input only) would end it early: it is written as U+FFFD.
void append_text(std::string& json, std::string& bytes, const FlameNames& strings) {
    size_t at = bytes.size();
    for (size_t s = 0; s < strings.size(); ++s) {
        std::string_view text = strings[s];
        if (text.find('\0') == std::string_view::npos) {
            bytes += text;
        } else {
            for (char c : text) {
                bytes += c == '\0' ? std::string_view("\xef\xbf\xbd") : std::string_view(&c, 1);
            }
        }
        bytes.push_back('\0');
    }
    fmt::format_to(std::back_inserter(json), "[{},{},\"text\"]", at, bytes.size() - at);
}

} // namespace

size_t ReportData::tables_bound() const {
    size_t nodes = m_node_frame.size();
    size_t bound = (m_frames.size() + m_frame_modules.size() + 2 * nodes + m_leaves.size()) * 4;
    bound += nodes * 5; // functionSteps: at most 5 bytes a varint
    for (size_t s = 0; s < m_strings.size(); ++s) {
        bound += m_strings[s].size() + 1; // a NUL after each (rare U+FFFDs aside)
    }
    size_t tables = 7;
    for (const auto& column : m_columns) {
        bound += column.size() * m_leaves.size() * sizeof(double);
        tables += column.size();
    }
    return bound + tables * 8; // each table starts at a multiple of 8
}

void ReportData::write_json(std::string& out, std::string& bytes, bool source_excerpts) && {
    // The function-level tree the page opens on, as each node's step from its parent's
    // node in it (function_tree.hpp): made first, so that its working tables (four numbers
    // a node at most) are let go of before the page's buffers fill.
    std::vector<int32_t> steps = function_tree_steps(m_node_parent, node_names(), m_strings.size());
    // Made at its full size at once: grown by doubling, a million stacks' tables were held
    // twice over while copied, at the writer's peak. Reserved bytes cost no memory until
    // written, so a bound does.
    bytes.reserve(bytes.size() + tables_bound());
    if (source_excerpts) {
        append_source_excerpts(out, m_sources);
    }
    // Each table is let go of once copied into `bytes`: the page's buffers fill while the
    // tables empty, where both had been held whole at the writer's peak.
    out += "\"binary\":{\"strings\":";
    append_text(out, bytes, m_strings);
    out += ",\"frames\":";
    append_binary<int32_t>(out, bytes, std::exchange(m_frames, {}));
    out += ",\"frameModules\":";
    append_binary<int32_t>(out, bytes, std::exchange(m_frame_modules, {}));
    // Each node's distance to its parent (a root's: its index + 1): mostly 1, as a stack's
    // frames are added one after another, which compresses to almost nothing.
    std::vector<int32_t> distances = std::exchange(m_node_parent, {});
    for (size_t n = 0; n < distances.size(); ++n) {
        distances[n] = static_cast<int32_t>(n) - distances[n];
    }
    out += ",\"parentDistances\":";
    append_binary<int32_t>(out, bytes, std::exchange(distances, {}));
    out += ",\"nodeFrames\":";
    append_binary<int32_t>(out, bytes, std::exchange(m_node_frame, {}));
    out += ",\"functionSteps\":";
    append_varints(out, bytes, std::exchange(steps, {}));
    size_t leaves = m_leaves.size();
    out += ",\"leaves\":";
    append_binary<int32_t>(out, bytes, std::exchange(m_leaves, {}));
    out += ",\"columns\":[";
    std::vector<int64_t> values;
    for (size_t c = 0; c < m_columns.size(); ++c) {
        out += c > 0 ? ",[" : "[";
        for (size_t t = 0; t < m_columns[c].size(); ++t) {
            values = std::exchange(m_columns[c][t], {});
            values.resize(leaves);
            if (t > 0) {
                out.push_back(',');
            }
            // As int32 where every value fits (most columns): half the bytes to pack and read.
            bool small = std::all_of(values.begin(), values.end(), [](int64_t v) {
                return v >= std::numeric_limits<int32_t>::min() &&
                       v <= std::numeric_limits<int32_t>::max();
            });
            if (small) {
                append_binary<int32_t>(out, bytes, values);
            } else {
                append_binary<double>(out, bytes, values);
            }
        }
        out.push_back(']');
    }
    out += "]}";
}

} // namespace heapkit
