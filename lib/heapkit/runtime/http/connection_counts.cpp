// SPDX-License-Identifier: MIT
#include "heapkit/runtime/http/connection_counts.hpp"

namespace heapkit::runtime::http {

ConnectionCounts::ConnectionCounts(unsigned max_connections, unsigned max_per_address,
                                   unsigned hard_limit)
    : m_max_connections(max_connections)
    , m_max_per_address(max_per_address)
    , m_hard_limit(hard_limit) {}

bool ConnectionCounts::add(const std::string& peer) {
    bool busy = m_open - m_draining >= m_max_connections;
    ++m_open;
    unsigned& from_peer = m_per_address[peer];
    ++from_peer;
    return busy || from_peer > m_max_per_address;
}

void ConnectionCounts::remove(const std::string& peer, bool draining) {
    --m_open;
    if (draining) {
        --m_draining;
    }
    auto count = m_per_address.find(peer);
    if (count != m_per_address.end() && --count->second == 0) {
        m_per_address.erase(count);
    }
}

} // namespace heapkit::runtime::http
