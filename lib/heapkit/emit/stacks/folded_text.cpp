// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/folded_text.hpp"

#include <charconv>

namespace heapkit {

Result<void> FoldedText::add(std::string_view frames, std::initializer_list<int64_t> values) {
    m_buffer.append(frames);
    for (int64_t value : values) {
        char digits[24];
        auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
        m_buffer.push_back(' ');
        m_buffer.append(digits, end);
    }
    m_buffer.push_back('\n');
    if (m_buffer.size() < (size_t{1} << 20)) {
        return {};
    }
    auto written = m_sink(m_buffer);
    m_buffer.clear();
    return written;
}

Result<void> FoldedText::finish() {
    return m_buffer.empty() ? Result<void>{} : m_sink(m_buffer);
}

} // namespace heapkit
