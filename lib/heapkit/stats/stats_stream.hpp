// SPDX-License-Identifier: MIT
// malloc_stats_print's output as it usually arrives: inside a program's standard error,
// between its own lines ("2> stats.json", an agent's "serving" line). The statistics are
// found in the stream and the rest is set aside, said, not parsed.
#pragma once

#include <string>
#include <string_view>

namespace heapkit::stats {

// The stream with everything but the statistics blanked: each skipped line's bytes
// turned into nothing but its newline, so that byte offsets (JSON) and line numbers
// (text) in messages still point into the file as given.
struct LocatedStats {
    std::string text;
    size_t lines_before = 0;   // non-empty lines skipped before the statistics
    size_t lines_after = 0;    // and after them
    std::string first_skipped; // the first such line, for the note (at most 80 bytes)
};

// Finds the statistics in `stream`: JSON (a "{" line whose object begins with "jemalloc")
// or text (from "___ Begin jemalloc statistics ___" to its end line). A stream holding
// neither is returned as it is, for the parser to refuse.
LocatedStats locate_stats(std::string_view stream);

// One line for the user about what locate_stats skipped; "" when nothing was.
std::string skipped_note(const LocatedStats& located, std::string_view source);

} // namespace heapkit::stats
