// SPDX-License-Identifier: MIT
// The pages at / and /debug/pprof/: for a person who opens the port in a browser.
#pragma once

#include "heapkit/runtime/request.hpp"

#include <string_view>
#include <vector>

namespace heapkit::runtime {

// An HTML list of the `pages` (every page, routes.cpp) whose path starts with `prefix`,
// each linked, with the query parameters it takes and what it shows.
Response index_page(std::string_view prefix, const std::vector<PageInfo>& pages);

} // namespace heapkit::runtime
