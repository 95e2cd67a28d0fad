// SPDX-License-Identifier: MIT
// A Response as HTTP/1.1 puts it on the wire.
#pragma once

#include "heapkit/runtime/request.hpp"

#include <string>

namespace heapkit::runtime::http {

// Status line, Content-Type, Content-Length, the response's own headers, "Connection:
// close" when `last`, then the body (none for a HEAD: `head_only`, its length still told).
std::string response_bytes(const Response& response, bool head_only, bool last);

} // namespace heapkit::runtime::http
