// SPDX-License-Identifier: MIT
// How many connections are open, and from where: what decides that a new one is told 503
// at once, or closed unanswered.
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace heapkit::runtime::http {

class ConnectionCounts {
public:
    ConnectionCounts(unsigned max_connections, unsigned max_per_address, unsigned hard_limit);

    // True when no connection may be added without one ending first.
    bool at_hard_limit() const { return m_open >= m_hard_limit; }
    // Counts a new connection from `peer` (peer_key()); true when it is over a limit and
    // gets 503 at once: max_connections being served (connections answered for the last
    // time count for the hard limit only, so that a refused crowd leaves room), or
    // max_per_address from its address.
    bool add(const std::string& peer);
    // A connection answered for the last time, reading what its client still sends.
    void started_draining() { ++m_draining; }
    void remove(const std::string& peer, bool draining);

private:
    unsigned m_max_connections;
    unsigned m_max_per_address;
    unsigned m_hard_limit;
    size_t m_open = 0;
    size_t m_draining = 0;
    std::map<std::string, unsigned> m_per_address;
};

} // namespace heapkit::runtime::http
