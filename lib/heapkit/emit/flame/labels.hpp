// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

// The texts of a flame graph SVG, spelled as flamegraph.pl spells them so that tools
// reading its titles read ours.
namespace heapkit {

// A frame's name as shown: without the "_[k]", "_[i]", "_[j]" or "_[w]" annotation that
// stack collapsers append (it only picks a colour in flamegraph.pl).
std::string_view display_name(std::string_view name);

// `name` cut to fit `room` characters: whole if it fits, else its first room - 2
// characters and "..", or "" when fewer than 3 fit. Counted in UTF-8 characters.
std::string fitted_label(std::string_view name, double room);

} // namespace heapkit
