// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// The texts of a flame graph SVG, spelled as flamegraph.pl spells them so that tools
// reading its titles read ours.
namespace heapkit {

// A frame's name as shown: without the "_[k]", "_[i]", "_[j]" or "_[w]" annotation that
// stack collapsers append (it only picks a colour in flamegraph.pl).
std::string_view display_name(std::string_view name);

// `text` safe in XML character data and attribute values: &, <, > and " as entities;
// bytes that are not UTF-8, and characters XML forbids (controls, U+FFFE, U+FFFF), as
// U+FFFD.
std::string escape_xml(std::string_view text);

// 1234567 -> "1,234,567".
std::string with_thousands(uint64_t value);

// 100 * part / total with two decimals ("12.50"), negative parts with a '-'.
std::string percent_of(uint64_t part, uint64_t total);
std::string percent_of(int64_t part, uint64_t total);

// `name` cut to fit `room` characters: whole if it fits, else its first room - 2
// characters and "..", or "" when fewer than 3 fit. Counted in UTF-8 characters.
std::string fitted_label(std::string_view name, double room);

} // namespace heapkit
