// SPDX-License-Identifier: MIT
#include "heapkit/runtime/http/listener.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <optional>

namespace heapkit::runtime::http {
namespace {

// The socket address to bind; nullopt when `address` is not a numeric IPv4 or IPv6 one.
std::optional<sockaddr_storage> socket_address(const std::string& address, int port) {
    sockaddr_storage storage{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(static_cast<uint16_t>(port));
        return storage;
    }
    std::string bare = address;
    if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') {
        bare = bare.substr(1, bare.size() - 2);
    }
    if (inet_pton(AF_INET6, bare.c_str(), &v6->sin6_addr) != 1) {
        return std::nullopt;
    }
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    return storage;
}

} // namespace

Result<Descriptor> listen_on(const std::string& address, int port, DescriptorTable* table) {
    auto bind_to = socket_address(address, port);
    if (!bind_to) {
        return fail("cannot listen on {}: not a numeric IPv4 or IPv6 address", address);
    }
    int family = bind_to->ss_family;
    Descriptor listener =
        Descriptor::adopt(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), table);
    if (!listener) {
        return fail_system(errno, "cannot make a socket: {}", std::strerror(errno));
    }
    int one = 1;
    // A restarted service gets its port back while old connections sit in TIME_WAIT.
    ::setsockopt(listener.number(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (family == AF_INET6) {
        ::setsockopt(listener.number(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    }
    socklen_t length = family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    if (::bind(listener.number(), reinterpret_cast<const sockaddr*>(&*bind_to), length) != 0 ||
        ::listen(listener.number(), 128) != 0) {
        int error = errno;
        return fail_system(error, "cannot listen on {}:{}: {}", address, port,
                           std::strerror(error));
    }
    return listener;
}

int bound_port(const Descriptor& listener) {
    sockaddr_storage bound{};
    socklen_t length = sizeof(bound);
    if (::getsockname(listener.number(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
        return 0;
    }
    if (bound.ss_family == AF_INET6) {
        return ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port);
    }
    return ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
}

std::string peer_key(const sockaddr_storage& peer) {
    if (peer.ss_family == AF_INET) {
        const auto& v4 = reinterpret_cast<const sockaddr_in&>(peer).sin_addr;
        return std::string(reinterpret_cast<const char*>(&v4), sizeof(v4));
    }
    if (peer.ss_family == AF_INET6) {
        const auto& v6 = reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr;
        const char* bytes = reinterpret_cast<const char*>(&v6);
        if (IN6_IS_ADDR_V4MAPPED(&v6)) {
            return std::string(bytes + 12, 4);
        }
        return std::string(bytes, 8);
    }
    return {};
}

} // namespace heapkit::runtime::http
