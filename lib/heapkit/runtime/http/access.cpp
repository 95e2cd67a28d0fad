// SPDX-License-Identifier: MIT
#include "heapkit/runtime/http/access.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <string>

namespace heapkit::runtime {
namespace {

bool equal_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
        if (lower(a[i]) != lower(b[i])) {
            return false;
        }
    }
    return true;
}

} // namespace

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

} // namespace heapkit::runtime
