// SPDX-License-Identifier: MIT
#include "heapkit/runtime/http/admission.hpp"

#include "heapkit/runtime/request.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <fmt/format.h>

namespace heapkit::runtime::http {
namespace {

bool equal_ignoring_case(std::string_view a, std::string_view b) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        if (lower(a[i]) != lower(b[i])) {
            return false;
        }
    }
    return true;
}

// "name:port", "[v6]:port" or either without the port: the name; nullopt when the port
// is not a number or the brackets do not close.
std::optional<std::string_view> host_name(std::string_view host) {
    std::string_view port;
    std::string_view name = host;
    if (host.starts_with('[')) {
        size_t close = host.find(']');
        if (close == std::string_view::npos) {
            return std::nullopt;
        }
        name = host.substr(0, close + 1);
        port = host.substr(close + 1);
        if (!port.empty() && !port.starts_with(':')) {
            return std::nullopt;
        }
    } else if (size_t colon = host.rfind(':'); colon != std::string_view::npos) {
        name = host.substr(0, colon);
        port = host.substr(colon);
    }
    if (!port.empty()) {
        port.remove_prefix(1);
        if (port.empty() || port.size() > 5 ||
            port.find_first_not_of("0123456789") != std::string_view::npos) {
            return std::nullopt;
        }
    }
    if (name.ends_with('.') && !name.starts_with('[')) {
        name.remove_suffix(1); // "localhost." is the same name, fully qualified
    }
    return name;
}

bool is_address_literal(std::string_view name) {
    std::string text(name);
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
        in6_addr v6{};
        return inet_pton(AF_INET6, text.substr(1, text.size() - 2).c_str(), &v6) == 1;
    }
    in_addr v4{};
    return inet_pton(AF_INET, text.c_str(), &v4) == 1;
}

const std::string* header(const Request& head, const std::string& name) {
    auto found = head.headers.find(name);
    return found == head.headers.end() ? nullptr : &found->second;
}

} // namespace

bool host_allowed(std::string_view host, const AdmissionRules& rules) {
    auto name = host_name(host);
    if (!name || name->empty()) {
        return false;
    }
    // A bare IPv6 loopback only in brackets: "::1" alone would read as a name with a port.
    if (equal_ignoring_case(*name, "localhost") ||
        (is_loopback_address(*name) && name->find(':') == std::string_view::npos) ||
        (name->starts_with('[') && is_loopback_address(*name))) {
        return true;
    }
    if (!rules.beyond_loopback) {
        return false;
    }
    return is_address_literal(*name) ||
           (!rules.public_name.empty() && equal_ignoring_case(*name, rules.public_name));
}

bool from_another_site(const Request& head) {
    if (const std::string* site = header(head, "sec-fetch-site")) {
        if (equal_ignoring_case(*site, "cross-site") || equal_ignoring_case(*site, "same-site")) {
            return true;
        }
    }
    const std::string* origin = header(head, "origin");
    if (origin == nullptr) {
        return false;
    }
    // "scheme://host[:port]" whose authority is the Host asked for; "null" never is.
    size_t slashes = origin->find("://");
    const std::string* host = header(head, "host");
    return slashes == std::string::npos || host == nullptr ||
           !equal_ignoring_case(std::string_view(*origin).substr(slashes + 3), *host);
}

std::optional<Response> refuse_head(const Request& head, const AdmissionRules& rules) {
    // HTTP/1.0 may leave Host out (RequestParser refuses that in 1.1); a browser never does.
    const std::string* host = header(head, "host");
    if (host != nullptr && !host_allowed(*host, rules)) {
        return text(403,
                    fmt::format("the Host header does not name this server: ask for a "
                                "loopback address or localhost{}",
                                rules.beyond_loopback ? ", an address or the public name" : ""));
    }
    if (from_another_site(head)) {
        return text(403, "refused: a browser sent this request from another site");
    }
    if (!rules.bearer_token.empty()) {
        const std::string* authorization = header(head, "authorization");
        if (authorization == nullptr || !bearer_token_matches(*authorization, rules.bearer_token)) {
            Response denied = text(401, "missing or wrong bearer token");
            denied.headers["WWW-Authenticate"] = "Bearer realm=\"heapkit\"";
            return denied;
        }
    }
    return std::nullopt;
}

bool is_loopback_address(std::string_view address) {
    // inet_pton takes only numbers (four decimal parts for IPv4), never a name.
    std::string text(address); // inet_pton wants a terminated string
    in_addr v4{};
    if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
        return (ntohl(v4.s_addr) >> 24) == 127;
    }
    // Brackets, as in URLs, around IPv6 addresses only.
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
        text = text.substr(1, text.size() - 2);
    }
    in6_addr v6{};
    return inet_pton(AF_INET6, text.c_str(), &v6) == 1 &&
           std::memcmp(&v6, &in6addr_loopback, sizeof(v6)) == 0;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
    // Every byte is looked at whatever the differences, so the time tells only the
    // lengths; volatile keeps the compiler from stopping at the first difference.
    volatile unsigned char differ = a.size() == b.size() ? 0 : 1;
    size_t n = a.size() < b.size() ? a.size() : b.size();
    for (size_t i = 0; i < n; ++i) {
        differ = differ | static_cast<unsigned char>(a[i] ^ b[i]);
    }
    return differ == 0;
}

bool bearer_token_matches(std::string_view authorization, std::string_view token) {
    constexpr std::string_view scheme = "Bearer";
    if (token.empty() || authorization.size() <= scheme.size() ||
        !equal_ignoring_case(authorization.substr(0, scheme.size()), scheme) ||
        authorization[scheme.size()] != ' ') {
        return false;
    }
    authorization.remove_prefix(scheme.size());
    while (!authorization.empty() && authorization.front() == ' ') {
        authorization.remove_prefix(1);
    }
    while (!authorization.empty() &&
           (authorization.back() == ' ' || authorization.back() == '\t')) {
        authorization.remove_suffix(1);
    }
    return constant_time_equal(authorization, token);
}

} // namespace heapkit::runtime::http
