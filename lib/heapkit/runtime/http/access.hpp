// SPDX-License-Identifier: MIT
#pragma once

#include <string_view>

// Who may talk to the server: the address checks and the bearer-token check, apart from
// any HTTP library so that they can be tested as plain functions. Not installed.
namespace heapkit::runtime {

// True for a numeric loopback address only: IPv4 127.0.0.0/8 (dotted quad) and IPv6 ::1
// (any spelling inet_pton takes, "[::1]" too). Names are never looked up: "localhost" or
// "127.evil.example" are not loopback.
bool is_loopback_address(std::string_view address);

// Whether an Authorization header value carries `token` as a bearer credential: the scheme
// compared without regard to case (RFC 7235), one or more spaces, then the token compared
// in time that does not depend on where the first difference is. An empty token matches
// nothing.
bool bearer_token_matches(std::string_view authorization, std::string_view token);

// a == b, in time that depends only on the lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

} // namespace heapkit::runtime
