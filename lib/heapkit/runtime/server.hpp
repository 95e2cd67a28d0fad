// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/runtime/handler.hpp"
#include "heapkit/util/error.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace heapkit::runtime {

// Every limit has a default fit for a service's debug port; README "Runtime library"
// says what each one protects against.
struct ServerOptions {
    std::string address = "127.0.0.1"; // numeric: IPv4 or IPv6, never a name
    int port = 0;                      // 0: any free port (see Server::port())
    // When set, every request needs "Authorization: Bearer <token>" (scheme in any case),
    // checked as soon as the headers are in, before any body is read.
    std::string bearer_token;
    // Heap dumps reveal memory contents: loopback only (127.0.0.0/8, ::1) unless this is
    // set, and then a bearer_token is required too.
    bool allow_non_loopback = false;
    unsigned threads = 4;               // event loops; a slow client holds none of them
    unsigned max_connections = 128;     // open connections; the next ones get 503 at once
    unsigned idle_timeout_seconds = 10; // a connection silent this long is closed
    // The request line and headers together; more get 431. MHD's per-connection memory
    // pool holds them, so this also bounds the memory a connection can make the server hold.
    size_t max_header_bytes = 16 * 1024;
    size_t max_headers = 64; // header fields; more get 431
    // Pages that wait out a window (CPU profiles, heap deltas over ?seconds=) run on a
    // thread of their own, not an event loop's; more at once get 503 + Retry-After.
    unsigned max_waiting = 4;
    HandlerOptions handler; // max_body (413), conversions at once, control
};

// The Handler behind an event-driven HTTP server (GNU libmicrohttpd) on background
// threads. Their own allocations are not sampled (thread.prof.active off), so serving a
// profile does not show up in the next one.
class Server {
public:
    // Binds and starts serving; an error for a refused address or a port in use.
    static Result<std::unique_ptr<Server>> start(const ServerOptions& options);
    ~Server(); // stops and joins
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    int port() const;
    void stop();
    // For the child of a fork() without exec, where the threads that served are gone
    // (fork copies only the calling thread) and nothing can be stopped or joined: closes
    // the child's copy of the listening socket, so the port stays the parent's alone, and
    // lets go of the rest without freeing it. The object serves nothing afterwards.
    void abandon_after_fork();
    // False when the listening socket is no longer the one the server opened: the program
    // closed it behind the server's back (some close every descriptor they did not open,
    // after fork()). MHD's threads and their descriptors are then in no state to stop:
    // stop() would abort the process inside MHD, so a caller lets the server go unstopped.
    bool listener_intact() const;

private:
    struct State;
    explicit Server(std::unique_ptr<State> state);
    std::unique_ptr<State> m_state;
};

// True for a numeric loopback address: 127.0.0.0/8 or ::1. Names are not resolved.
bool is_loopback(const std::string& address);

} // namespace heapkit::runtime
