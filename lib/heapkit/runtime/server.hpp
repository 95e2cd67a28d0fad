// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/runtime/handler.hpp"
#include "heapkit/util/error.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace heapkit::runtime {

// Says `line` on standard error as "heapkit-runtime[PID]: line", in one write(2).
void warn_on_stderr(const std::string& line);

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
    // The name clients use beyond loopback ("db7.example.net"): Host must name the server
    // (a loopback address or localhost; beyond loopback also an address or this name),
    // or the request is refused (403): a web page's DNS rebinding gets no profile.
    std::string public_name;
    unsigned threads = 4;                      // workers running pages; a slow client holds none
    unsigned max_connections = 128;            // open connections; the next ones get 503 at once
    unsigned max_connections_per_address = 96; // from one address (IPv6: a /64); then 503
    unsigned idle_timeout_seconds = 10;        // a connection silent this long is closed
    // A request's line and headers must all be in this long after their first byte,
    // however slowly they trickle (slowloris): else 408 and the connection is closed.
    unsigned header_timeout_seconds = 10;
    // The request line and headers together; more get 431 (414 for the URL alone). The
    // most a connection can make the server hold before a page runs, with max_body.
    size_t max_header_bytes = 16 * 1024;
    size_t max_headers = 64; // header fields; more get 431
    // Pages that wait out a window (CPU profiles, heap deltas over ?seconds=) run on a
    // thread of their own, not a worker's; more at once get 503 + Retry-After.
    unsigned max_waiting = 4;
    // Where the server says why it stopped serving (one line: the program closed one of
    // its descriptors). nullptr: nowhere.
    std::function<void(const std::string&)> warn = warn_on_stderr;
    HandlerOptions handler; // max_body (413), conversions at once, control
};

// The Handler behind heapkit's own HTTP/1.1 server (http/: one event-loop thread, a few
// workers, a thread for each page that waits), on background threads that block every
// signal and do not sample their own allocations, so that serving a profile does not
// show up in the next one. Its descriptors sit above the host's (guest/descriptor.hpp)
// and are never used once the host has closed them.
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
    // the child's copies of the server's descriptors (the listening socket, so the port
    // stays the parent's alone; the epoll, the eventfd, connections in flight), touching
    // nothing the parent shares, and lets go of the rest without freeing it. The object
    // serves nothing afterwards.
    void abandon_after_fork();
    // False when the listening socket is no longer the one the server opened (the program
    // closed it behind the server's back: some close every descriptor they did not open,
    // after fork()), or the server stopped serving for that reason. stop() is safe then.
    bool listener_intact() const;

private:
    struct State;
    explicit Server(std::unique_ptr<State> state);
    std::unique_ptr<State> m_state;
};

// True for a numeric loopback address: 127.0.0.0/8 or ::1. Names are not resolved.
bool is_loopback(const std::string& address);

} // namespace heapkit::runtime
