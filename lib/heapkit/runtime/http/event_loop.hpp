// SPDX-License-Identifier: MIT
// The server's one event-loop thread: accepts, reads requests, hands complete ones over,
// writes their answers, and enforces the limits of time and number. It never waits on a
// page, and a slow client holds nothing but its connection.
#pragma once

#include "heapkit/runtime/guest/descriptor.hpp"
#include "heapkit/runtime/http/admission.hpp"
#include "heapkit/runtime/http/connection_counts.hpp"
#include "heapkit/runtime/http/request_parser.hpp"
#include "heapkit/util/error.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace heapkit::runtime::http {

struct Connection;

struct LoopOptions {
    ParserLimits limits;
    AdmissionRules rules;
    unsigned max_connections = 128; // past this (or the next): 503 at once
    unsigned max_per_address = 96;  // from one address (IPv6: one /64)
    unsigned hard_limit = 144;      // past this a connection is closed unanswered
    std::chrono::seconds idle_timeout{10};
    std::chrono::seconds head_timeout{10}; // for a whole request head, however it trickles
};

// Takes a complete request of connection `id`; someone calls EventLoop::answer(id, …).
using Dispatch = std::function<void(uint64_t id, Request request)>;
// On the loop's thread: connection `id`'s client closed its side (or the connection broke)
// while its request was being handled. The answer, if it is still sent, may find no one:
// a page that waits out a window should end it now.
using Hangup = std::function<void(uint64_t id)>;
// Says one line (why the server stopped serving).
using Warn = std::function<void(const std::string& line)>;

class EventLoop {
public:
    // The loop over `listener`; its own descriptors (epoll, wake-up eventfd, connections)
    // are listed in `table`, which must outlive it.
    static Result<std::unique_ptr<EventLoop>> open(Descriptor listener, DescriptorTable& table,
                                                   const LoopOptions& options, Dispatch dispatch,
                                                   Hangup hangup, Warn warn);
    ~EventLoop();
    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

    // On the loop's thread: serves until quit(), or until a descriptor of ours turns out
    // to be the host's (then says so once, and never touches that number again).
    void run();
    // Any thread: the answer to connection `id`'s request (dropped if it has gone).
    void answer(uint64_t id, Response response);
    // Any thread: run() returns soon (within a second even if the wake-up is lost).
    void quit();
    bool listener_intact() const;

private:
    EventLoop(Descriptor listener, DescriptorTable& table, const LoopOptions& options,
              Dispatch dispatch, Hangup hangup, Warn warn);

    bool descriptors_intact();
    void accept_all();
    void watch_listener(uint32_t events);
    void admit(Descriptor socket, std::string peer);
    void on_event(uint64_t id, uint32_t events);
    void hung_up(Connection& connection, uint32_t events);
    void read_from(Connection& connection);
    void advance(Connection& connection);
    void respond(Connection& connection, const Response& response, bool last);
    void flush(Connection& connection);
    void start_draining(Connection& connection);
    void watch(Connection& connection, uint32_t events);
    void close(uint64_t id);
    bool end_a_drain();
    void take_answers();
    void sweep(std::chrono::steady_clock::time_point now);
    bool check(const Descriptor& descriptor, const char* what);
    void go_dark();

    LoopOptions m_options;
    ConnectionCounts m_counts;
    DescriptorTable& m_table;
    Descriptor m_listener;
    Descriptor m_epoll;
    Descriptor m_wake; // an eventfd: answer() and quit() write it
    Dispatch m_dispatch;
    Hangup m_hangup;
    Warn m_warn;
    std::unordered_map<uint64_t, std::unique_ptr<Connection>> m_connections;
    uint64_t m_next_id = 2; // 0: the listener, 1: the wake-up
    std::mutex m_mutex;     // guards m_answers
    std::vector<std::pair<uint64_t, Response>> m_answers;
    // Set while the listener is unwatched (no descriptor was free for a connection).
    std::optional<std::chrono::steady_clock::time_point> m_listener_resumes;
    std::atomic<bool> m_quit{false};
    std::atomic<bool> m_dark{false};
    std::string m_foreign; // what turned out not to be ours
};

} // namespace heapkit::runtime::http
