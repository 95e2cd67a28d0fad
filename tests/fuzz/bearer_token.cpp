// SPDX-License-Identifier: MIT
// Any bytes as an Authorization header and a Host header (runtime/http/admission.cpp: the
// bearer token and loopback checks, and the Host check): the first line is the configured
// token, the second the header value.
#include "heapkit/runtime/http/admission.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace heapkit::runtime;
using namespace heapkit::runtime::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    size_t newline = text.find('\n');
    std::string_view token = text.substr(0, newline);
    std::string_view value = newline == std::string_view::npos ? "" : text.substr(newline + 1);
    bool matches = bearer_token_matches(value, token);
    // A match means the token, whole, after the scheme: never an empty or shorter one.
    if (matches && (token.empty() || value.find(token) == std::string_view::npos)) {
        std::abort();
    }
    if (constant_time_equal(value, token) != (value == token)) {
        std::abort();
    }
    static_cast<void>(is_loopback_address(value));
    http::AdmissionRules rules{std::string(token), true, std::string(token)};
    static_cast<void>(http::host_allowed(value, rules));
    static_cast<void>(http::host_allowed(value, {}));
    return 0;
}
