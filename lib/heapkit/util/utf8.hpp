// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

namespace heapkit {

// `text` with every byte sequence that is not well-formed UTF-8 replaced by U+FFFD.
// Dumps carry whatever bytes a process used for paths and thread names; protobuf string
// fields (and the consumers decoding them) require UTF-8.
std::string valid_utf8(std::string_view text);

} // namespace heapkit
