// SPDX-License-Identifier: MIT
#include "heapkit/runtime/http/response_bytes.hpp"

#include <fmt/format.h>
#include <http_parser.h>
#include <iterator>

namespace heapkit::runtime::http {

std::string response_bytes(const Response& response, bool head_only, bool last) {
    std::string bytes;
    bytes.reserve(256 + (head_only ? 0 : response.body.size()));
    auto out = std::back_inserter(bytes);
    fmt::format_to(out, "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
                   response.status, http_status_str(static_cast<http_status>(response.status)),
                   response.content_type, response.body.size());
    for (const auto& [name, value] : response.headers) {
        fmt::format_to(out, "{}: {}\r\n", name, value);
    }
    bytes += last ? "Connection: close\r\n\r\n" : "\r\n";
    if (!head_only) {
        bytes += response.body;
    }
    return bytes;
}

} // namespace heapkit::runtime::http
