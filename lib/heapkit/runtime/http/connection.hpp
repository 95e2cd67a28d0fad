// SPDX-License-Identifier: MIT
// One client connection as the event loop keeps it: its socket, its parser, where it is
// in its exchange, and the times its deadlines run from.
#pragma once

#include "heapkit/runtime/guest/descriptor.hpp"
#include "heapkit/runtime/http/request_parser.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace heapkit::runtime::http {

enum class Phase {
    reading,  // a request, or waiting for one
    handling, // a page has the request
    writing,  // the answer is going out
    draining, // answered for the last time; reading what the client still sends
};

struct Connection {
    using Clock = std::chrono::steady_clock;

    Connection(Descriptor s, std::string address, const ParserLimits& limits, HeadCheck check)
        : socket(std::move(s))
        , peer(std::move(address))
        , parser(limits, std::move(check)) {}

    Descriptor socket;
    std::string peer; // peer_key()
    RequestParser parser;
    Phase phase = Phase::reading;
    uint64_t id = 0;
    bool registered = false; // with the epoll descriptor
    uint32_t watched = 0;    // the events it waits for there (0: only hang-ups)
    std::string unparsed;    // read, not yet given to the parser (a pipelined request)
    std::string out;
    size_t sent = 0;
    size_t drained = 0;
    bool last = false;                           // close once `out` is sent
    bool head_only = false;                      // the request being answered is a HEAD
    Clock::time_point active;                    // last progress either way
    std::optional<Clock::time_point> head_began; // a request's head is on its way
};

} // namespace heapkit::runtime::http
