// SPDX-License-Identifier: MIT
#include "heapkit/read/read_dump.hpp"

#include "heapkit/read/heap_v2.hpp"
#include "heapkit/read/jeprof_symbolized.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>

namespace heapkit {
namespace {

// text.find('\0'), a few megabytes at a time, each given back (`parsed_up_to`) once
// looked at: a mapped file's pages would otherwise all be resident before the parser,
// which gives them back as it goes, had read its first line. It reads them again.
size_t find_nul(std::string_view text, const ParsedUpTo& parsed_up_to) {
    constexpr size_t chunk = 8 << 20;
    for (size_t at = 0; at < text.size(); at += chunk) {
        std::string_view part = text.substr(at, chunk);
        if (size_t nul = part.find('\0'); nul != std::string_view::npos) {
            return at + nul;
        }
        if (parsed_up_to) {
            parsed_up_to(part.data() + part.size());
        }
    }
    return std::string_view::npos;
}

} // namespace

Result<RawDump> parse_dump(std::string_view text, std::string_view source,
                           const ParsedUpTo& parsed_up_to, StackConsumer* consumer) {
    // Text formats only: a NUL byte means binary data or a damaged file.
    if (size_t nul = find_nul(text, parsed_up_to); nul != std::string_view::npos) {
        size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + nul, '\n'));
        if (line == 1) {
            return fail("{}:1: binary data, not a jemalloc heap profile", source);
        }
        return fail("{}:{}: NUL byte in the text (a damaged file?)", source, line);
    }
    // jemalloc writes whole lines, the last one (of MAPPED_LIBRARIES, a copy of
    // /proc/self/maps) too: text after the last newline is a dump cut short, even where
    // what is left still parses (a path cut in the middle names another file).
    if (!text.empty() && text.back() != '\n') {
        size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
        return fail("{}:{}: the last line has no newline: the dump is cut short (truncated), "
                    "or was edited without its final newline (jemalloc ends every line with "
                    "one)",
                    source, line);
    }
    if (is_jeprof_symbolized(text)) {
        return parse_jeprof_symbolized(text, source, parsed_up_to, consumer);
    }
    return parse_heap_v2(text, source, 1, parsed_up_to, consumer);
}

Result<RawDump> read_dump(const std::string& path) {
    HEAPKIT_TRY_ASSIGN(InputBuffer input, InputBuffer::open(path));
    auto dump = parse_dump(input.text(), input.name(),
                           [&](const char* position) { input.release_before(position); });
    if (dump) {
        dump->modified_nanos = input.modified_nanos();
    }
    return dump;
}

} // namespace heapkit
