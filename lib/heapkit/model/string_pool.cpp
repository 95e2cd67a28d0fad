// SPDX-License-Identifier: MIT
#include "heapkit/model/string_pool.hpp"

#include <cstring>

namespace heapkit {
namespace {

constexpr size_t block_size = size_t{64} << 10;

} // namespace

std::string_view StringPool::intern(std::string_view text) {
    if (text.empty()) {
        return {};
    }
    if (auto it = m_texts.find(text); it != m_texts.end()) {
        return *it;
    }
    std::string_view kept = store(text);
    m_texts.insert(kept);
    return kept;
}

std::string_view StringPool::store(std::string_view text) {
    if (text.size() > block_size / 4) { // a long text gets a block of its own
        char* own =
            m_blocks.emplace_back(std::make_unique_for_overwrite<char[]>(text.size())).get();
        std::memcpy(own, text.data(), text.size());
        return {own, text.size()};
    }
    if (text.size() > m_free_size) { // the rest of the current block is left unused
        m_free = m_blocks.emplace_back(std::make_unique_for_overwrite<char[]>(block_size)).get();
        m_free_size = block_size;
    }
    std::memcpy(m_free, text.data(), text.size());
    std::string_view kept(m_free, text.size());
    m_free += text.size();
    m_free_size -= text.size();
    return kept;
}

} // namespace heapkit
