// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"
#include "heapkit/util/sink.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace heapkit {

// Collapsed-stack lines, "frames VALUE..." (one value, or difffolded.pl's two), written
// to a sink about a megabyte at a time.
class FoldedText {
public:
    explicit FoldedText(const Sink& sink)
        : m_sink(sink) {}

    Result<void> add(std::string_view frames, std::initializer_list<int64_t> values);
    // Writes what is left.
    Result<void> finish();

private:
    const Sink& m_sink;
    std::string m_buffer;
};

} // namespace heapkit
