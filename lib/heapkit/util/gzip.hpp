// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"

#include <string>
#include <string_view>

namespace heapkit {

// True when the bytes start with the gzip magic 0x1f 0x8b.
bool is_gzip(std::string_view bytes);

// Inflates every gzip member in `compressed` (concatenated members, as `cat a.gz b.gz`
// makes, are joined). `source` names the input in error messages.
Result<std::string> gunzip(std::string_view compressed, std::string_view source);

// Deflates `raw` into one gzip member at zlib `level` (0-9).
std::string gzip(std::string_view raw, int level);

} // namespace heapkit
