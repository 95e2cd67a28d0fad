// SPDX-License-Identifier: MIT
// Text made safe for the SVG documents the views write.
#pragma once

#include <string>
#include <string_view>

namespace heapkit {

// `text` safe in XML character data and attribute values: &, <, > and " as entities;
// bytes that are not UTF-8, and characters XML forbids (controls, U+FFFE, U+FFFF), as
// U+FFFD.
std::string escape_xml(std::string_view text);

} // namespace heapkit
