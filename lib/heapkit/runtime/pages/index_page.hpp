// SPDX-License-Identifier: MIT
// The pages at / and /debug/pprof/: for a person who opens the port in a browser.
#pragma once

#include "heapkit/runtime/handler.hpp"

#include <string_view>

namespace heapkit::runtime {

// An HTML list of every page (pages()) whose path starts with `prefix`, each linked, with
// the query parameters it takes and what it shows.
Response index_page(std::string_view prefix);

} // namespace heapkit::runtime
