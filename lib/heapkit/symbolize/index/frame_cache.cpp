// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/frame_cache.hpp"

#include "heapkit/symbolize/index/cache_directory.hpp"
#include "heapkit/symbolize/options.hpp"
#include "heapkit/util/output.hpp"
#include "heapkit/util/private_files.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>

namespace heapkit {
namespace {

// Bump when the format or what the symbolizer puts in a Frame changes: old files are
// then simply not found, and age out of the directory.
constexpr std::string_view magic = "heapkit frame cache 4\n";
constexpr std::string_view subdirectory = "frames-4";

// Native byte order: a cache lives on the machine that wrote it. The magic's byte order
// mark makes a file copied from another kind of machine fail to decode, not misdecode.
constexpr uint32_t byte_order_mark = 0x01020304;

class Encoder {
public:
    void u32(uint32_t value) { raw(&value, sizeof value); }
    void u64(uint64_t value) { raw(&value, sizeof value); }
    void text(std::string_view value) {
        u32(static_cast<uint32_t>(value.size()));
        m_bytes += value;
    }
    void raw(const void* data, size_t size) {
        m_bytes.append(static_cast<const char*>(data), size);
    }
    std::string take() { return std::move(m_bytes); }

private:
    std::string m_bytes;
};

// Every read checks the length left, so a truncated or damaged file fails cleanly.
class Decoder {
public:
    explicit Decoder(std::string_view bytes)
        : m_bytes(bytes) {}
    bool u32(uint32_t& value) { return raw(&value, sizeof value); }
    bool u64(uint64_t& value) { return raw(&value, sizeof value); }
    // `value` views the decoded bytes.
    bool text(std::string_view& value) {
        uint32_t size = 0;
        if (!u32(size) || size > m_bytes.size()) {
            return false;
        }
        value = m_bytes.substr(0, size);
        m_bytes.remove_prefix(size);
        return true;
    }
    bool raw(void* data, size_t size) {
        if (size > m_bytes.size()) {
            return false;
        }
        std::memcpy(data, m_bytes.data(), size);
        m_bytes.remove_prefix(size);
        return true;
    }
    bool literal(std::string_view expected) {
        if (!m_bytes.starts_with(expected)) {
            return false;
        }
        m_bytes.remove_prefix(expected.size());
        return true;
    }
    size_t left() const { return m_bytes.size(); }

private:
    std::string_view m_bytes;
};

// A text of the file's table: `texts` holds them, in the pool.
bool decode_text(Decoder& in, const std::vector<std::string_view>& texts, std::string_view& text) {
    uint32_t index = 0;
    if (!in.u32(index) || index >= texts.size()) {
        return false;
    }
    text = texts[index];
    return true;
}

bool decode_frame(Decoder& in, const std::vector<std::string_view>& texts, Frame& frame) {
    return decode_text(in, texts, frame.name) && decode_text(in, texts, frame.system_name) &&
           decode_text(in, texts, frame.file) && in.u32(frame.line) && in.u32(frame.column) &&
           in.u32(frame.start_line);
}

std::string environment(const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::string() : std::string(value);
}

} // namespace

std::string default_cache_directory() {
    if (std::string own = environment("HEAPKIT_CACHE_DIR"); !own.empty()) {
        return own;
    }
    if (std::string xdg = environment("XDG_CACHE_HOME"); !xdg.empty()) {
        return xdg + "/heapkit";
    }
    if (std::string home = environment("HOME"); !home.empty()) {
        return home + "/.cache/heapkit";
    }
    return {};
}

// The file: magic, byte order mark, the table of distinct texts (count, then each as
// length and bytes), the entries (count, then each as vaddr, depth and its frames, a
// frame's texts as indexes into the table). The table keeps a function's name once
// however many of its addresses are cached.
std::optional<std::span<const Frame>> FrameEntries::find(uint64_t vaddr) const {
    auto it = m_ranges.find(vaddr);
    if (it == m_ranges.end()) {
        return std::nullopt;
    }
    return std::span<const Frame>(m_frames).subspan(it->second.first, it->second.count);
}

bool FrameEntries::add(uint64_t vaddr, std::span<const Frame> frames) {
    auto [it, added] =
        m_ranges.try_emplace(vaddr, Range{m_frames.size(), static_cast<uint32_t>(frames.size())});
    if (added) {
        m_frames.insert(m_frames.end(), frames.begin(), frames.end());
    }
    return added;
}

void FrameEntries::merge(const FrameEntries& other) {
    other.for_each([&](uint64_t vaddr, std::span<const Frame> frames) { add(vaddr, frames); });
}

void FrameEntries::reserve(size_t entries) {
    m_ranges.reserve(entries);
}

std::string encode_frame_entries(const FrameEntries& entries) {
    std::vector<std::string_view> texts;
    std::unordered_map<std::string_view, uint32_t> index;
    auto index_of = [&](std::string_view text) {
        auto [it, inserted] = index.try_emplace(text, static_cast<uint32_t>(texts.size()));
        if (inserted) {
            texts.push_back(text);
        }
        return it->second;
    };
    Encoder body;
    body.u64(entries.size());
    entries.for_each([&](uint64_t vaddr, std::span<const Frame> frames) {
        body.u64(vaddr);
        body.u32(static_cast<uint32_t>(frames.size()));
        for (const Frame& frame : frames) {
            body.u32(index_of(frame.name));
            body.u32(index_of(frame.system_name));
            body.u32(index_of(frame.file));
            body.u32(frame.line);
            body.u32(frame.column);
            body.u32(frame.start_line);
        }
    });
    Encoder out;
    out.raw(magic.data(), magic.size());
    out.u32(byte_order_mark);
    out.u64(texts.size());
    for (std::string_view text : texts) {
        out.text(text);
    }
    std::string bytes = body.take();
    out.raw(bytes.data(), bytes.size());
    return out.take();
}

std::optional<FrameEntries> decode_frame_entries(std::string_view bytes, StringPool& strings) {
    Decoder in(bytes);
    uint32_t mark = 0;
    uint64_t text_count = 0;
    if (!in.literal(magic) || !in.u32(mark) || mark != byte_order_mark || !in.u64(text_count)) {
        return std::nullopt;
    }
    // Counts are checked against the bytes left (a text takes at least 4, an entry 12,
    // a frame 24): a count beyond that is damage, not something to reserve for.
    if (text_count > in.left() / 4) {
        return std::nullopt;
    }
    std::vector<std::string_view> texts(text_count);
    for (std::string_view& text : texts) {
        if (!in.text(text)) {
            return std::nullopt;
        }
        text = strings.intern(text);
    }
    uint64_t count = 0;
    if (!in.u64(count) || count > in.left() / 12) {
        return std::nullopt;
    }
    FrameEntries entries;
    entries.reserve(count);
    std::vector<Frame> frames;
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t vaddr = 0;
        uint32_t depth = 0;
        if (!in.u64(vaddr) || !in.u32(depth) || depth > in.left() / 24) {
            return std::nullopt;
        }
        frames.resize(depth);
        for (Frame& frame : frames) {
            if (!decode_frame(in, texts, frame)) {
                return std::nullopt;
            }
        }
        entries.add(vaddr, frames);
    }
    if (in.left() != 0) {
        return std::nullopt;
    }
    return entries;
}

FrameCache::FrameCache(std::string directory, StringPool& strings, uint64_t max_bytes)
    : m_directory(directory.empty() ? std::string() : directory + "/" + std::string(subdirectory))
    , m_max_bytes(max_bytes)
    , m_strings(strings) {}

std::string FrameCache::path_of(const std::string& build_id) const {
    return m_directory + "/" + build_id;
}

FrameCache::Build& FrameCache::load(const std::string& build_id) {
    auto [it, inserted] = m_builds.try_emplace(build_id);
    if (inserted && !m_directory.empty()) {
        std::string path = path_of(build_id);
        if (auto bytes = read_regular_file(path, m_max_bytes)) {
            if (auto entries = decode_frame_entries(*bytes, m_strings)) {
                it->second.entries = std::move(*entries);
                it->second.on_disk = true;
                // Recently used: kept longest. (The file, never what a link leads to.)
                ::utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
            }
        }
    }
    return it->second;
}

bool FrameCache::has(const std::string& build_id) {
    return !build_id.empty() && load(build_id).on_disk;
}

std::optional<std::span<const Frame>> FrameCache::find(const std::string& build_id,
                                                       uint64_t vaddr) {
    if (build_id.empty()) {
        return std::nullopt;
    }
    return load(build_id).entries.find(vaddr);
}

void FrameCache::add(const std::string& build_id, uint64_t vaddr, std::span<const Frame> frames) {
    if (build_id.empty() || m_directory.empty()) {
        return;
    }
    Build& build = load(build_id);
    if (build.entries.add(vaddr, frames)) {
        build.changed = true;
    }
}

std::vector<std::string> FrameCache::save() {
    std::vector<std::string> warnings;
    bool wrote = false;
    for (auto& [build_id, build] : m_builds) {
        if (!build.changed) {
            continue;
        }
        if (auto made = make_private_directory(m_directory); !made) {
            warnings.push_back(fmt::format("frame cache not saved: {}", made.error().message));
            return warnings;
        }
        // Another run may have saved this build since we loaded it: keep its entries too.
        std::string path = path_of(build_id);
        if (auto bytes = read_regular_file(path, m_max_bytes)) {
            if (auto theirs = decode_frame_entries(*bytes, m_strings)) {
                build.entries.merge(*theirs);
            }
        }
        if (auto ok =
                write_output({path, false, false, false}, encode_frame_entries(build.entries));
            !ok) {
            warnings.push_back(fmt::format("frame cache not saved: {}", ok.error().message));
            continue;
        }
        build.changed = false;
        wrote = true;
    }
    if (wrote) {
        trim(warnings);
    }
    return warnings;
}

void FrameCache::trim(std::vector<std::string>& warnings) const {
    trim_cache_directory(m_directory, m_max_bytes, "the frame cache", warnings);
}

} // namespace heapkit
