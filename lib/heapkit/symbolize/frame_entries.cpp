// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/frame_entries.hpp"

namespace heapkit {

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

} // namespace heapkit
