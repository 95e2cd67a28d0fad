// SPDX-License-Identifier: MIT
// The listening socket, and who is on the other end of an accepted one.
#pragma once

#include "heapkit/runtime/guest/descriptor.hpp"
#include "heapkit/util/error.hpp"

#include <string>
#include <sys/socket.h>

namespace heapkit::runtime::http {

// A non-blocking TCP socket listening on `address` (numeric IPv4, or IPv6 with or
// without brackets) and `port` (0: any free one), above the descriptor floor.
Result<Descriptor> listen_on(const std::string& address, int port, DescriptorTable* table);
// The port `listener` is bound to; 0 if it cannot be told.
int bound_port(const Descriptor& listener);

// Where a client connects from, as far as limits go: its IPv4 address, or the /64 its
// IPv6 address is in (one host gets a whole /64 to pick from).
std::string peer_key(const sockaddr_storage& peer);

} // namespace heapkit::runtime::http
