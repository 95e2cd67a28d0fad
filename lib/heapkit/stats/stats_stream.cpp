// SPDX-License-Identifier: MIT
#include "heapkit/stats/stats_stream.hpp"

#include "heapkit/util/terminal_text.hpp"

#include <fmt/format.h>

namespace heapkit::stats {
namespace {

constexpr std::string_view text_begin = "___ Begin jemalloc statistics ___";
constexpr std::string_view text_end = "--- End jemalloc statistics ---";

// Where the line holding `at` starts.
size_t line_start(std::string_view text, size_t at) {
    size_t newline = text.rfind('\n', at == 0 ? 0 : at - 1);
    return at == 0 || newline == std::string_view::npos ? 0 : newline + 1;
}

// The start of the JSON document: a line that is "{" (spaces aside) followed by the
// "jemalloc" key, as malloc_stats_print with option J begins. npos when there is none.
size_t json_start(std::string_view text) {
    for (size_t key = text.find("\"jemalloc\""); key != std::string_view::npos;
         key = text.find("\"jemalloc\"", key + 1)) {
        size_t brace = text.find_last_not_of(" \t\r\n", key == 0 ? 0 : key - 1);
        if (key == 0 || brace == std::string_view::npos || text[brace] != '{') {
            continue;
        }
        size_t start = line_start(text, brace);
        if (text.substr(start, brace - start).find_first_not_of(" \t") == std::string_view::npos) {
            return brace;
        }
    }
    return std::string_view::npos;
}

// One past the brace that closes the object opening at `start`, strings skipped; the
// text's end when it never closes (a truncated document, which the parser reports).
size_t json_end(std::string_view text, size_t start) {
    size_t depth = 0;
    bool in_string = false;
    for (size_t i = start; i < text.size(); ++i) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') {
                ++i;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{') {
            ++depth;
        } else if (c == '}' && --depth == 0) {
            return i + 1;
        }
    }
    return text.size();
}

// Blanks [from, to) of `out` but its newlines, counting its non-empty lines.
size_t blank(std::string& out, size_t from, size_t to, std::string& first) {
    size_t lines = 0;
    bool content = false;
    size_t line_from = from;
    for (size_t i = from; i <= to; ++i) {
        if (i == to || out[i] == '\n') {
            if (content) {
                ++lines;
                if (first.empty()) {
                    first = out.substr(line_from, std::min<size_t>(i - line_from, 80));
                }
            }
            content = false;
            line_from = i + 1;
            continue;
        }
        content = content || (out[i] != ' ' && out[i] != '\t' && out[i] != '\r');
    }
    for (size_t i = from; i < to; ++i) {
        if (out[i] != '\n') {
            out[i] = ' ';
        }
    }
    return lines;
}

} // namespace

LocatedStats locate_stats(std::string_view stream) {
    LocatedStats out;
    out.text = std::string(stream);
    size_t start = std::string_view::npos;
    size_t end = std::string_view::npos;
    if (size_t banner = stream.find(text_begin); banner != std::string_view::npos &&
                                                 banner == line_start(stream, banner) &&
                                                 banner < json_start(stream)) {
        start = banner;
        size_t last = stream.find(text_end, banner);
        end = last == std::string_view::npos ? stream.size() : last + text_end.size();
    } else if (size_t brace = json_start(stream); brace != std::string_view::npos) {
        start = line_start(stream, brace);
        end = json_end(stream, brace);
    }
    if (start == std::string_view::npos) {
        return out;
    }
    out.lines_before = blank(out.text, 0, start, out.first_skipped);
    std::string first_after;
    out.lines_after = blank(out.text, end, out.text.size(), first_after);
    if (out.first_skipped.empty()) {
        out.first_skipped = first_after;
    }
    return out;
}

std::string skipped_note(const LocatedStats& located, std::string_view source) {
    if (located.lines_before == 0 && located.lines_after == 0) {
        return "";
    }
    return fmt::format("{}: skipped {} line{} before the statistics and {} after (the "
                       "program's other output, first: \"{}\")",
                       source, located.lines_before, located.lines_before == 1 ? "" : "s",
                       located.lines_after, terminal_safe(located.first_skipped));
}

} // namespace heapkit::stats
