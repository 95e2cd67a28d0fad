// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/runtime/handler.hpp"
#include "heapkit/util/error.hpp"

#include <memory>
#include <string>

namespace heapkit::runtime {

struct ServerOptions {
    std::string address = "127.0.0.1";
    int port = 0;                    // 0: any free port (see Server::port())
    std::string bearer_token;        // when set, requests need "Authorization: Bearer <token>"
    bool allow_non_loopback = false; // heap dumps reveal memory contents: loopback by default
    HandlerOptions handler;
};

// The Handler behind an HTTP server (cpp-httplib) on a background thread. Its threads'
// own allocations are not sampled (thread.prof.active off), so serving a profile does
// not show up in the next one.
class Server {
public:
    // Binds and starts serving; an error for a refused address or a port in use.
    static Result<std::unique_ptr<Server>> start(const ServerOptions& options);
    ~Server(); // stops and joins
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    int port() const;
    void stop();

private:
    struct State;
    explicit Server(std::unique_ptr<State> state);
    std::unique_ptr<State> m_state;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(const std::string& address);

} // namespace heapkit::runtime
