// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace heapkit {

// Each distinct text kept once, in blocks that never move, so that frames can hold
// string_views of it: a big profile names the same few thousand functions and files in
// hundreds of thousands of frames, and a std::string per frame field made allocation
// the largest cost of symbolizing one. Not thread-safe.
class StringPool {
public:
    StringPool() = default;
    StringPool(const StringPool&) = delete;
    StringPool& operator=(const StringPool&) = delete;

    // The pool's copy of `text`, valid as long as the pool.
    std::string_view intern(std::string_view text);

    size_t size() const { return m_texts.size(); }

private:
    std::string_view store(std::string_view text);

    std::vector<std::unique_ptr<char[]>> m_blocks;
    char* m_free = nullptr; // in the last block
    size_t m_free_size = 0;
    std::unordered_set<std::string_view> m_texts;
};

} // namespace heapkit
