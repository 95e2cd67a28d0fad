// SPDX-License-Identifier: MIT
#include "heapkit/runtime/http/event_loop.hpp"

#include "heapkit/runtime/http/connection.hpp"
#include "heapkit/runtime/http/listener.hpp"
#include "heapkit/runtime/http/response_bytes.hpp"
#include "heapkit/runtime/request.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace heapkit::runtime::http {
namespace {

using Clock = Connection::Clock;

constexpr uint64_t listener_id = 0;
constexpr uint64_t wake_id = 1;
// After a last answer the connection is read (and the bytes dropped) this long before it
// is closed: closed with unread bytes, the kernel would reset it and the client could
// lose the answer (a 431 for a header flood still being sent).
constexpr auto drain_time = std::chrono::seconds(1);
constexpr size_t drain_bytes = 256 * 1024;

} // namespace

Result<std::unique_ptr<EventLoop>> EventLoop::open(Descriptor listener, DescriptorTable& table,
                                                   const LoopOptions& options, Dispatch dispatch,
                                                   Hangup hangup, Warn warn) {
    std::unique_ptr<EventLoop> loop(new EventLoop(std::move(listener), table, options,
                                                  std::move(dispatch), std::move(hangup),
                                                  std::move(warn)));
    loop->m_epoll = Descriptor::adopt(::epoll_create1(EPOLL_CLOEXEC), &table);
    loop->m_wake = Descriptor::adopt(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), &table);
    if (!loop->m_epoll || !loop->m_wake) {
        return fail_system(errno, "cannot make the server's epoll and eventfd: {}",
                           std::strerror(errno));
    }
    for (auto [descriptor, id] :
         {std::pair{&loop->m_listener, listener_id}, std::pair{&loop->m_wake, wake_id}}) {
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.u64 = id;
        if (::epoll_ctl(loop->m_epoll.number(), EPOLL_CTL_ADD, descriptor->number(), &event) != 0) {
            return fail_system(errno, "epoll_ctl: {}", std::strerror(errno));
        }
    }
    return loop;
}

EventLoop::EventLoop(Descriptor listener, DescriptorTable& table, const LoopOptions& options,
                     Dispatch dispatch, Hangup hangup, Warn warn)
    : m_options(options)
    , m_counts(options.max_connections, options.max_per_address, options.hard_limit)
    , m_table(table)
    , m_listener(std::move(listener))
    , m_dispatch(std::move(dispatch))
    , m_hangup(std::move(hangup))
    , m_warn(std::move(warn)) {}

EventLoop::~EventLoop() {
    m_connections.clear(); // before the table they are listed in can go
}

void EventLoop::run() {
    std::vector<epoll_event> events(64);
    while (!m_quit.load() && !m_dark.load()) {
        if (!descriptors_intact()) {
            break;
        }
        // A second at most: a quit whose wake-up went to a closed eventfd, or descriptors
        // closed under an idle loop, are noticed that late. A quarter of one with
        // connections open, for their deadlines; less while the listener rests.
        int timeout = m_listener_resumes ? 100 : m_connections.empty() ? 1000 : 250;
        int ready =
            ::epoll_wait(m_epoll.number(), events.data(), static_cast<int>(events.size()), timeout);
        for (int i = 0; i < ready && !m_dark.load(); ++i) {
            on_event(events[static_cast<size_t>(i)].data.u64,
                     events[static_cast<size_t>(i)].events);
        }
        if (!m_dark.load()) {
            take_answers();
        }
        if (!m_dark.load()) {
            sweep(Clock::now());
        }
    }
    if (m_dark.load()) {
        go_dark();
        return;
    }
    // Quitting: answers already made go out if the sockets take them at once.
    take_answers();
}

void EventLoop::answer(uint64_t id, Response response) {
    {
        std::lock_guard lock(m_mutex);
        m_answers.emplace_back(id, std::move(response));
    }
    uint64_t one = 1;
    if (m_wake.intact()) {
        static_cast<void>(::write(m_wake.number(), &one, sizeof(one)));
    }
}

void EventLoop::quit() {
    m_quit.store(true);
    uint64_t one = 1;
    if (m_wake.intact()) {
        static_cast<void>(::write(m_wake.number(), &one, sizeof(one)));
    }
}

bool EventLoop::listener_intact() const {
    return !m_dark.load() && m_listener.intact();
}

bool EventLoop::check(const Descriptor& descriptor, const char* what) {
    if (m_dark.load()) {
        return false;
    }
    if (descriptor.intact()) {
        return true;
    }
    m_foreign = fmt::format("{} (descriptor {})", what, descriptor.number());
    m_dark.store(true);
    return false;
}

bool EventLoop::descriptors_intact() {
    return check(m_epoll, "its epoll descriptor") && check(m_wake, "its wake-up eventfd") &&
           check(m_listener, "its listening socket");
}

// The host closed a descriptor of ours (and may have opened a file on its number): one
// line, and from here on the server touches none of its numbers that are not still its
// own. Connections still ours are closed; the listener stops listening; the epoll and
// eventfd are closed with the loop, if still ours then.
void EventLoop::go_dark() {
    if (m_warn) {
        m_warn(fmt::format("the program closed {}: the server stops serving (nothing is "
                           "written to a descriptor it does not own)",
                           m_foreign));
    }
    for (auto& [id, connection] : m_connections) {
        connection->socket.reset(); // closed if still ours, else let go
    }
    m_connections.clear();
    if (m_listener.intact()) {
        ::shutdown(m_listener.number(), SHUT_RD); // refuses new connections; stays ours
    }
}

void EventLoop::on_event(uint64_t id, uint32_t events) {
    if (id == listener_id) {
        accept_all();
        return;
    }
    if (id == wake_id) {
        uint64_t count = 0;
        if (check(m_wake, "its wake-up eventfd")) {
            static_cast<void>(::read(m_wake.number(), &count, sizeof(count)));
        }
        return;
    }
    auto found = m_connections.find(id);
    if (found == m_connections.end()) {
        return;
    }
    Connection& connection = *found->second;
    if (connection.phase == Phase::handling) {
        hung_up(connection, events);
        return;
    }
    if (connection.phase == Phase::writing) {
        flush(connection);
    } else {
        read_from(connection);
    }
}

// While a request is handled only a hang-up is watched for. Its page is told (a profile
// whose client has gone ends its window rather than hold the profiler); a closed side
// only (EPOLLRDHUP) keeps the connection, for a client that half-closed after its request
// still reads the answer, but is watched for no more (it would be reported again and again).
void EventLoop::hung_up(Connection& connection, uint32_t events) {
    if (m_hangup) {
        m_hangup(connection.id);
    }
    if (events & (EPOLLHUP | EPOLLERR)) {
        close(connection.id); // its answer, when it comes, finds no one
        return;
    }
    watch(connection, 0);
}

void EventLoop::accept_all() {
    for (int round = 0; round < 64 && check(m_listener, "its listening socket"); ++round) {
        sockaddr_storage peer{};
        socklen_t length = sizeof(peer);
        int fd = ::accept4(m_listener.number(), reinterpret_cast<sockaddr*>(&peer), &length,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
            // Out of descriptors: the backlog waits for one to free. Still readable, the
            // listener would spin the loop meanwhile: it is left unwatched for a while.
            watch_listener(0);
            m_listener_resumes = Clock::now() + std::chrono::milliseconds(100);
            return;
        }
        if (fd < 0) {
            return; // EAGAIN
        }
        Descriptor socket = Descriptor::adopt(fd, &m_table);
        if (!socket || (m_counts.at_hard_limit() && !end_a_drain())) {
            continue; // closed unanswered
        }
        int one = 1;
        // Small answers on a kept-alive connection are not held back for delayed ACKs.
        ::setsockopt(socket.number(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        admit(std::move(socket), peer_key(peer));
    }
}

void EventLoop::watch_listener(uint32_t events) {
    if (!check(m_epoll, "its epoll descriptor") || !check(m_listener, "its listening socket")) {
        return;
    }
    epoll_event event{};
    event.events = events;
    event.data.u64 = listener_id;
    ::epoll_ctl(m_epoll.number(), EPOLL_CTL_MOD, m_listener.number(), &event);
}

void EventLoop::admit(Descriptor socket, std::string peer) {
    HeadCheck check_head = [this](const Request& head, std::optional<uint64_t>) {
        return refuse_head(head, m_options.rules);
    };
    auto connection = std::make_unique<Connection>(std::move(socket), std::move(peer),
                                                   m_options.limits, std::move(check_head));
    Connection& it = *connection;
    it.id = m_next_id++;
    it.active = Clock::now();
    it.head_began = it.active;
    bool busy = m_counts.add(it.peer);
    m_connections.emplace(it.id, std::move(connection));
    if (busy) {
        // Told at once, before a byte is read: a client over the limit holds no slot long.
        Response refusal = text(503, "too many connections; try again");
        refusal.headers.emplace("Retry-After", "1");
        respond(it, refusal, true);
        return;
    }
    watch(it, EPOLLIN);
}

void EventLoop::read_from(Connection& connection) {
    char buffer[16 * 1024];
    if (!check(connection.socket, "a client connection")) {
        return;
    }
    ssize_t got = ::recv(connection.socket.number(), buffer, sizeof(buffer), 0);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
        return;
    }
    if (connection.phase == Phase::draining) {
        connection.drained += got > 0 ? static_cast<size_t>(got) : 0;
        if (got <= 0 || connection.drained > drain_bytes) {
            close(connection.id);
        }
        return;
    }
    if (got <= 0) {
        connection.parser.end_of_input();
        if (connection.parser.state() == RequestParser::State::refused) {
            respond(connection, connection.parser.take_refusal(), true);
        } else {
            close(connection.id);
        }
        return;
    }
    connection.active = Clock::now();
    if (!connection.head_began) {
        connection.head_began = connection.active;
    }
    connection.unparsed.append(buffer, static_cast<size_t>(got));
    advance(connection);
}

// Parses what has been read, up to one complete (or refused) request.
void EventLoop::advance(Connection& connection) {
    RequestParser& parser = connection.parser;
    size_t used = parser.feed(connection.unparsed);
    connection.unparsed.erase(0, used);
    switch (parser.state()) {
    case RequestParser::State::reading:
        return;
    case RequestParser::State::refused:
        respond(connection, parser.take_refusal(), true);
        return;
    case RequestParser::State::complete:
        break;
    }
    Request request = parser.take_request();
    connection.head_only = request.method == "HEAD";
    connection.last = !parser.keep_alive();
    connection.phase = Phase::handling;
    connection.head_began.reset();
    watch(connection, EPOLLRDHUP);
    m_dispatch(connection.id, std::move(request));
}

void EventLoop::respond(Connection& connection, const Response& response, bool last) {
    connection.last = connection.last || last;
    connection.out = response_bytes(response, connection.head_only, connection.last);
    connection.sent = 0;
    connection.phase = Phase::writing;
    flush(connection);
}

void EventLoop::flush(Connection& connection) {
    while (connection.sent < connection.out.size()) {
        if (!check(connection.socket, "a client connection")) {
            return;
        }
        ssize_t wrote = ::send(connection.socket.number(), connection.out.data() + connection.sent,
                               connection.out.size() - connection.sent, MSG_NOSIGNAL);
        if (wrote < 0 && errno == EAGAIN) {
            watch(connection, EPOLLOUT);
            return;
        }
        if (wrote <= 0) {
            close(connection.id);
            return;
        }
        connection.sent += static_cast<size_t>(wrote);
        connection.active = Clock::now();
    }
    connection.out = std::string();
    if (connection.last) {
        start_draining(connection);
        return;
    }
    connection.phase = Phase::reading;
    connection.parser.next();
    watch(connection, EPOLLIN);
    if (!connection.unparsed.empty()) {
        connection.head_began = Clock::now();
        advance(connection); // a request that came in the same packets as the last one
    }
}

void EventLoop::start_draining(Connection& connection) {
    if (!check(connection.socket, "a client connection")) {
        return;
    }
    ::shutdown(connection.socket.number(), SHUT_WR);
    connection.phase = Phase::draining;
    m_counts.started_draining();
    connection.active = Clock::now();
    watch(connection, EPOLLIN);
}

void EventLoop::watch(Connection& connection, uint32_t events) {
    if (connection.registered && connection.watched == events) {
        return;
    }
    if (!connection.registered && events == 0) {
        return; // nothing to wait for yet
    }
    if (!check(m_epoll, "its epoll descriptor") ||
        !check(connection.socket, "a client connection")) {
        return;
    }
    epoll_event event{};
    event.events = events;
    event.data.u64 = connection.id;
    int op = connection.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (::epoll_ctl(m_epoll.number(), op, connection.socket.number(), &event) == 0) {
        connection.registered = true;
        connection.watched = events;
    }
}

void EventLoop::close(uint64_t id) {
    auto found = m_connections.find(id);
    if (found == m_connections.end()) {
        return;
    }
    m_counts.remove(found->second->peer, found->second->phase == Phase::draining);
    m_connections.erase(found); // the socket closes itself, if still ours
}

// At the hard limit, the connection that has drained longest makes room: it has had its
// answer, and a new client (perhaps from another address) has had nothing yet.
bool EventLoop::end_a_drain() {
    Connection* oldest = nullptr;
    for (auto& [id, connection] : m_connections) {
        if (connection->phase == Phase::draining &&
            (oldest == nullptr || connection->active < oldest->active)) {
            oldest = connection.get();
        }
    }
    if (oldest == nullptr) {
        return false;
    }
    close(oldest->id);
    return true;
}

void EventLoop::take_answers() {
    std::vector<std::pair<uint64_t, Response>> answers;
    {
        std::lock_guard lock(m_mutex);
        answers.swap(m_answers);
    }
    for (auto& [id, response] : answers) {
        auto found = m_connections.find(id);
        if (found != m_connections.end() && found->second->phase == Phase::handling) {
            respond(*found->second, response, false);
        }
        if (m_dark.load()) {
            return;
        }
    }
}

// Deadlines: a request head that takes too long in all (however it trickles), silence
// too long, a drain that is over.
void EventLoop::sweep(Clock::time_point now) {
    if (m_listener_resumes && now >= *m_listener_resumes) {
        m_listener_resumes.reset();
        watch_listener(EPOLLIN);
    }
    std::vector<uint64_t> late;
    std::vector<uint64_t> expired;
    for (auto& [id, connection] : m_connections) {
        bool idle = now - connection->active > m_options.idle_timeout;
        switch (connection->phase) {
        case Phase::reading:
            if (connection->head_began && now - *connection->head_began > m_options.head_timeout) {
                late.push_back(id);
            } else if (idle) {
                expired.push_back(id);
            }
            break;
        case Phase::writing:
            if (idle) {
                expired.push_back(id);
            }
            break;
        case Phase::draining:
            if (now - connection->active > drain_time) {
                expired.push_back(id);
            }
            break;
        case Phase::handling:
            break;
        }
    }
    for (uint64_t id : expired) {
        close(id);
    }
    for (uint64_t id : late) {
        auto found = m_connections.find(id);
        if (m_dark.load()) {
            return;
        }
        if (found != m_connections.end()) {
            respond(*found->second, text(408, "the request head took too long"), true);
        }
    }
}

} // namespace heapkit::runtime::http
