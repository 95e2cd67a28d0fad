// SPDX-License-Identifier: MIT
// Who may talk to the server, and what a request's head must show before any page sees
// it: a peer on loopback unless the server is bound beyond it, a name of this server in
// Host (DNS rebinding), no other site behind it (a browser's cross-site request), the
// bearer token when there is one. Plain functions of an address or a head, so that they
// are tested (and fuzzed) apart from any socket.
#pragma once

#include "heapkit/runtime/request.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace heapkit::runtime::http {

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

struct AdmissionRules {
    std::string bearer_token; // empty: none needed
    // Bound beyond loopback (only ever with a token): Host may also be an address literal
    // or public_name.
    bool beyond_loopback = false;
    std::string public_name; // e.g. "db7.example.net"; compared without case, port aside
};

// Whether a Host header names this server: a loopback address (127.0.0.0/8, [::1]) or
// "localhost", with or without a port; beyond loopback also any address literal (a
// browser sends one only when it was pointed at that address, which rebinding cannot do)
// and the public name.
bool host_allowed(std::string_view host, const AdmissionRules& rules);

// Whether a browser says the request comes from another site: Sec-Fetch-Site cross-site
// or same-site (another port of localhost is another origin), or an Origin that is not
// the Host asked for. Non-browser clients (curl, go tool pprof, Prometheus) send neither.
bool from_another_site(const Request& head);

// The answer refusing `head` (400/403/401), or nullopt to go on. Header names are in
// lower case (RequestParser).
std::optional<Response> refuse_head(const Request& head, const AdmissionRules& rules);

} // namespace heapkit::runtime::http
