// SPDX-License-Identifier: MIT
#include "heapkit/read/read_dump.hpp"

#include "heapkit/read/heap_v2.hpp"
#include "heapkit/read/jeprof_symbolized.hpp"
#include "heapkit/util/input.hpp"

namespace heapkit {

Result<RawDump> parse_dump(std::string_view text, std::string_view source) {
    if (is_jeprof_symbolized(text)) {
        return parse_jeprof_symbolized(text, source);
    }
    std::string_view first_line = text.substr(0, text.find('\n'));
    if (first_line.find('\0') != std::string_view::npos) {
        return fail("{}:1: binary data, not a jemalloc heap profile", source);
    }
    return parse_heap_v2(text, source);
}

Result<RawDump> read_dump(const std::string& path) {
    return read_input(path).and_then(
        [](const InputText& input) { return parse_dump(input.bytes, input.name); });
}

} // namespace heapkit
