// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/address_index.hpp"

#include <algorithm>
#include <cstring>

namespace heapkit {
namespace {

constexpr std::string_view magic = "HKADDRIX";
constexpr uint32_t byte_order_mark = 0x01020304;
constexpr uint32_t flag_dwarf = 1;
constexpr size_t header_size = 64;
constexpr size_t range_size = 16;
constexpr size_t frame_size = 24;
constexpr size_t text_entry_size = 8;

// Header fields' offsets.
constexpr size_t at_version = 8;
constexpr size_t at_mark = 12;
constexpr size_t at_flags = 16;
constexpr size_t at_build_id = 20;
constexpr size_t at_range_count = 24;
constexpr size_t at_chain_count = 32;
constexpr size_t at_frame_count = 40;
constexpr size_t at_text_count = 48;
constexpr size_t at_text_size = 56;

template <typename T> void put(std::string& out, T value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T> void put_at(std::string& out, size_t offset, T value) {
    std::memcpy(out.data() + offset, &value, sizeof value);
}

// `bytes` is known to hold sizeof(T) at `offset` (checked by the caller).
template <typename T> T get(std::string_view bytes, size_t offset) {
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof value);
    return value;
}

// `count` items of `size` bytes from `offset` fit in `total`; `end` is where they stop.
bool section_fits(size_t offset, uint64_t count, size_t size, size_t total, size_t& end) {
    if (offset > total || count > (total - offset) / size) {
        return false;
    }
    end = offset + static_cast<size_t>(count) * size;
    return true;
}

} // namespace

size_t AddressIndexWriter::FrameKeyHash::operator()(const FrameKey& key) const {
    uint64_t hash = 0xcbf29ce484222325;
    for (uint32_t field : key.fields) {
        hash = (hash ^ field) * 0x100000001b3;
    }
    return static_cast<size_t>(hash);
}

AddressIndexWriter::AddressIndexWriter(std::string_view build_id, bool dwarf, Texts texts)
    : m_dwarf(dwarf)
    , m_pooled(texts == Texts::pooled) {
    text_by_bytes(build_id); // text 0 (the caller's: not pooled)
}

uint32_t AddressIndexWriter::text(std::string_view value) {
    if (!m_pooled) {
        return text_by_bytes(value);
    }
    auto [it, inserted] = m_pooled_ids.try_emplace(value.data(), PooledText{value.size(), 0});
    if (inserted || it->second.size != value.size()) { // a prefix of another text: by bytes
        it->second = {value.size(), text_by_bytes(value)};
    }
    return it->second.id;
}

uint32_t AddressIndexWriter::text_by_bytes(std::string_view value) {
    if (auto it = m_text_ids.find(value); it != m_text_ids.end()) {
        return it->second;
    }
    auto id = static_cast<uint32_t>(m_texts.size());
    m_texts.emplace_back(value);
    m_text_ids.emplace(m_texts.back(), id);
    return id;
}

void AddressIndexWriter::add(uint64_t start, std::span<const Frame> frames) {
    std::vector<uint32_t>& chain = m_chain; // reused: a vector a range cost a malloc each
    chain.clear();
    for (const Frame& frame : frames) {
        FrameKey key{{text(frame.name), text(frame.system_name), text(frame.file), frame.line,
                      frame.column, frame.start_line}};
        auto [it, inserted] = m_frame_ids.try_emplace(key, static_cast<uint32_t>(m_frames.size()));
        if (inserted) {
            m_frames.push_back(key);
        }
        chain.push_back(it->second);
    }
    if (m_any && chain == m_last) {
        return; // the same answer as the range before: one range
    }
    put(m_ranges, start);
    put(m_ranges, static_cast<uint32_t>(m_chains.size()));
    put(m_ranges, static_cast<uint32_t>(chain.size()));
    m_chains.insert(m_chains.end(), chain.begin(), chain.end());
    m_last.swap(chain);
    m_any = true;
}

std::string AddressIndexWriter::finish(uint64_t end) {
    put(m_ranges, end); // the end: a range of no frames
    put(m_ranges, static_cast<uint32_t>(m_chains.size()));
    put(m_ranges, uint32_t{0});

    // Sized once, each part let go of as it is copied: the file is as large as all the
    // parts, and growing it by doubling held up to three times that at the end.
    size_t text_bytes = 0;
    for (const std::string& text : m_texts) {
        text_bytes += text.size();
    }
    std::string out;
    out.reserve(header_size + m_ranges.size() + m_chains.size() * sizeof(uint32_t) +
                m_frames.size() * frame_size + m_texts.size() * text_entry_size + text_bytes);
    out.resize(header_size, '\0');
    out.replace(0, magic.size(), magic);
    put_at(out, at_version, address_index_version);
    put_at(out, at_mark, byte_order_mark);
    put_at(out, at_flags, m_dwarf ? flag_dwarf : uint32_t{0});
    put_at(out, at_build_id, uint32_t{0});
    put_at(out, at_range_count, uint64_t{m_ranges.size() / range_size});
    put_at(out, at_chain_count, uint64_t{m_chains.size()});
    put_at(out, at_frame_count, uint64_t{m_frames.size()});
    put_at(out, at_text_count, uint64_t{m_texts.size()});
    out += m_ranges;
    std::string().swap(m_ranges);
    out.append(reinterpret_cast<const char*>(m_chains.data()), m_chains.size() * sizeof(uint32_t));
    std::vector<uint32_t>().swap(m_chains);
    static_assert(sizeof(FrameKey) == frame_size); // the frames section, as it is in memory
    out.append(reinterpret_cast<const char*>(m_frames.data()), m_frames.size() * frame_size);
    std::vector<FrameKey>().swap(m_frames);
    m_frame_ids = {};
    m_text_ids = {};
    m_pooled_ids = {};
    uint32_t text_offset = 0;
    for (const std::string& text : m_texts) {
        put(out, text_offset);
        put(out, static_cast<uint32_t>(text.size()));
        text_offset += static_cast<uint32_t>(text.size());
    }
    put_at(out, at_text_size, uint64_t{text_offset});
    for (const std::string& text : m_texts) {
        out += text;
    }
    return out;
}

std::string encode_address_index(std::string_view build_id, bool dwarf,
                                 std::span<const AnsweredRange> ranges, uint64_t end) {
    AddressIndexWriter writer(build_id, dwarf);
    for (const AnsweredRange& range : ranges) {
        writer.add(range.start, range.frames);
    }
    return writer.finish(end);
}

Result<AddressIndex> AddressIndex::open(std::string_view bytes, std::string_view name) {
    if (bytes.size() < header_size || !bytes.starts_with(magic)) {
        return fail("{}: not a heapkit address index", name);
    }
    if (get<uint32_t>(bytes, at_version) != address_index_version ||
        get<uint32_t>(bytes, at_mark) != byte_order_mark) {
        return fail("{}: an address index of another version or byte order", name);
    }
    AddressIndex index;
    index.m_bytes = bytes;
    index.m_dwarf = (get<uint32_t>(bytes, at_flags) & flag_dwarf) != 0;
    uint64_t ranges = get<uint64_t>(bytes, at_range_count);
    uint64_t chains = get<uint64_t>(bytes, at_chain_count);
    uint64_t frames = get<uint64_t>(bytes, at_frame_count);
    uint64_t texts = get<uint64_t>(bytes, at_text_count);
    uint64_t text_size = get<uint64_t>(bytes, at_text_size);
    size_t end = 0;
    index.m_ranges = header_size;
    bool fits = ranges >= 1 && section_fits(index.m_ranges, ranges, range_size, bytes.size(), end);
    index.m_chains = end;
    fits = fits && section_fits(index.m_chains, chains, sizeof(uint32_t), bytes.size(), end);
    index.m_frames = end;
    fits = fits && section_fits(index.m_frames, frames, frame_size, bytes.size(), end);
    index.m_texts = end;
    fits = fits && section_fits(index.m_texts, texts, text_entry_size, bytes.size(), end);
    index.m_text_bytes = end;
    if (!fits || bytes.size() - end != text_size) {
        return fail("{}: damaged address index (its sections do not add up to its size)", name);
    }
    index.m_range_count = static_cast<size_t>(ranges);
    index.m_chain_count = static_cast<size_t>(chains);
    index.m_frame_count = static_cast<size_t>(frames);
    index.m_text_count = static_cast<size_t>(texts);
    uint32_t build_id = get<uint32_t>(bytes, at_build_id);
    if (!index.text(build_id, index.m_build_id)) {
        return fail("{}: damaged address index (no build id)", name);
    }
    return index;
}

AddressIndex::Range AddressIndex::range(size_t i) const {
    size_t at = m_ranges + i * range_size;
    return {get<uint64_t>(m_bytes, at), get<uint32_t>(m_bytes, at + 8),
            get<uint32_t>(m_bytes, at + 12)};
}

uint64_t AddressIndex::range_start(size_t i) const {
    return range(i).start;
}

bool AddressIndex::text(uint32_t index, std::string_view& out) const {
    if (index >= m_text_count) {
        return false;
    }
    size_t at = m_texts + size_t{index} * text_entry_size;
    uint64_t offset = get<uint32_t>(m_bytes, at);
    uint64_t length = get<uint32_t>(m_bytes, at + 4);
    size_t available = m_bytes.size() - m_text_bytes;
    if (offset > available || length > available - offset) {
        return false;
    }
    out = m_bytes.substr(m_text_bytes + offset, length);
    return true;
}

bool AddressIndex::frame(uint32_t index, Frame& out) const {
    if (index >= m_frame_count) {
        return false;
    }
    size_t at = m_frames + size_t{index} * frame_size;
    out.line = get<uint32_t>(m_bytes, at + 12);
    out.column = get<uint32_t>(m_bytes, at + 16);
    out.start_line = get<uint32_t>(m_bytes, at + 20);
    return text(get<uint32_t>(m_bytes, at), out.name) &&
           text(get<uint32_t>(m_bytes, at + 4), out.system_name) &&
           text(get<uint32_t>(m_bytes, at + 8), out.file);
}

std::optional<std::vector<Frame>> AddressIndex::frames_at(uint64_t vaddr) const {
    // The last range starting at or below `vaddr`; the final range only ends the others.
    size_t low = 0;
    size_t high = m_range_count; // ranges [low, high) may hold it
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (range(middle).start <= vaddr) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    if (low == 0 || low == m_range_count) {
        return std::vector<Frame>{}; // below the first range, or at or past the end
    }
    Range found = range(low - 1);
    if (found.first > m_chain_count || found.length > m_chain_count - found.first) {
        return std::nullopt;
    }
    std::vector<Frame> frames(found.length);
    for (uint32_t i = 0; i < found.length; ++i) {
        uint32_t id = get<uint32_t>(m_bytes, m_chains + (size_t{found.first} + i) * 4);
        if (!frame(id, frames[i])) {
            return std::nullopt;
        }
    }
    return frames;
}

} // namespace heapkit
