// SPDX-License-Identifier: MIT
#include "heapkit/runtime/server.hpp"

#include "heapkit/runtime/guest/own_pages.hpp"
#include "heapkit/runtime/guest/threads.hpp"
#include "heapkit/runtime/guest/unsampled_scope.hpp"
#include "heapkit/runtime/http/event_loop.hpp"
#include "heapkit/runtime/http/listener.hpp"
#include "heapkit/runtime/profiler.hpp"
#include "heapkit/util/try.hpp"
#include "heapkit/util/waiting_room.hpp"
#include "heapkit/util/worker_pool.hpp"

#include <fmt/format.h>
#include <thread>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

Result<void> check_options(const ServerOptions& options) {
    if (!is_loopback(options.address)) {
        if (!options.allow_non_loopback) {
            return fail("refusing to serve heap profiles on {}: heap dumps reveal memory "
                        "contents; bind a loopback address (127.0.0.1 or ::1) or set "
                        "allow_non_loopback",
                        options.address);
        }
        if (options.bearer_token.empty()) {
            return fail("refusing to serve heap profiles on {} without a bearer token",
                        options.address);
        }
    }
    if (options.port < 0 || options.port > 65535) {
        return fail("port {} is out of range", options.port);
    }
    if (options.threads == 0 || options.max_connections == 0) {
        return fail("the server needs at least one thread and one connection");
    }
    return {};
}

http::LoopOptions loop_options(const ServerOptions& options) {
    http::LoopOptions loop;
    loop.limits = {options.max_header_bytes, options.max_headers, options.handler.max_body};
    loop.rules.bearer_token = options.bearer_token;
    loop.rules.beyond_loopback = !is_loopback(options.address);
    loop.rules.public_name = options.public_name;
    loop.max_connections = options.max_connections;
    loop.max_per_address = options.max_connections_per_address;
    // Connections past max_connections are still taken (a few) so that they hear 503
    // rather than nothing; past that, they are closed at once.
    loop.hard_limit = options.max_connections + std::max(16u, options.threads);
    loop.idle_timeout = std::chrono::seconds(options.idle_timeout_seconds);
    loop.head_timeout = std::chrono::seconds(options.header_timeout_seconds);
    return loop;
}

Response busy(std::string why) {
    Response response = text(503, std::move(why));
    response.headers.emplace("Retry-After", "1"); // (operator[]: GCC 12 warns falsely)
    return response;
}

} // namespace

void warn_on_stderr(const std::string& line) {
    std::string text = fmt::format("heapkit-runtime[{}]: {}\n", getpid(), line);
    static_cast<void>(::write(STDERR_FILENO, text.data(), text.size()));
}

bool is_loopback(const std::string& address) {
    return http::is_loopback_address(address);
}

// Declared in the order they are made; stop() takes them down in its own order.
struct Server::State {
    explicit State(const ServerOptions& server)
        : options(server)
        , handler(server.handler)
        , table(loop_options(server).hard_limit + 3) // and listener, epoll, eventfd
        , waiting(server.max_waiting, [](std::function<void()> page) {
            return start_guest_thread("heapkit-wait", std::move(page));
        }) {}

    ServerOptions options;
    Handler handler;
    DescriptorTable table; // every descriptor below is listed here
    std::unique_ptr<http::EventLoop> loop;
    std::unique_ptr<WorkerPool> workers;
    WaitingRoom waiting;
    std::thread loop_thread;
    int port = 0;

    // On the loop's thread: a complete request goes to a worker, or to a thread of its
    // own when it waits out a window (a 30 s CPU profile would hold a worker that long).
    void dispatch(uint64_t id, Request request) {
        if (Handler::waits(request)) {
            request.wait = [this, id](std::chrono::milliseconds window) {
                waiting.wait(id, window);
            };
            request.stopping = [this, id] { return waiting.stopping(id); };
            if (!waiting.enter(id, [this, id, request = std::move(request)] {
                    loop->answer(id, handler.handle(request));
                    release_own_code_pages();
                })) {
                loop->answer(id, busy(fmt::format("{} profiles are being taken; try again",
                                                  options.max_waiting)));
            }
            return;
        }
        if (!workers->post([this, id, request = std::move(request)]() -> WorkerPool::HandOver {
                return [this, id, response = handler.handle(request)]() mutable {
                    loop->answer(id, std::move(response));
                    // The code the page ran is not kept resident in the host (own_pages.hpp).
                    release_own_code_pages();
                };
            })) {
            loop->answer(id, busy("the server is stopping"));
        }
    }
};

Server::Server(std::unique_ptr<State> state)
    : m_state(std::move(state)) {}

Server::~Server() {
    stop();
}

int Server::port() const {
    return m_state->port;
}

void Server::stop() {
    if (!m_state || !m_state->loop) {
        return;
    }
    m_state->waiting.stop();  // windows cut short: their pages answer 503 at once
    m_state->workers->stop(); // pages under way finish
    m_state->loop->quit();    // the answers made go out if they can at once
    m_state->loop_thread.join();
    m_state->loop.reset(); // closes the descriptors that are still the server's
}

void Server::abandon_after_fork() {
    if (!m_state) {
        return;
    }
    m_state->table.close_copies_after_fork();
    static_cast<void>(m_state.release()); // its mutexes and threads were the parent's
}

bool Server::listener_intact() const {
    return m_state && m_state->loop && m_state->loop->listener_intact();
}

Result<std::unique_ptr<Server>> Server::start(const ServerOptions& options) {
    // Called on a thread of the host's: what the server keeps for its life (its state,
    // threads, buffers) is a guest's, not in the host's profile.
    UnsampledScope unsampled;
    HEAPKIT_TRY(check_options(options));
    auto state = std::make_unique<State>(options);
    HEAPKIT_TRY_ASSIGN(Descriptor listener,
                       http::listen_on(options.address, options.port, &state->table));
    state->port = http::bound_port(listener);
    State* shared = state.get();
    HEAPKIT_TRY_ASSIGN(
        state->loop,
        http::EventLoop::open(
            std::move(listener), state->table, loop_options(options),
            [shared](uint64_t id, Request request) { shared->dispatch(id, std::move(request)); },
            [shared](uint64_t id) { shared->waiting.abandon(id); }, options.warn));
    state->workers = std::make_unique<WorkerPool>(options.threads, [](std::function<void()> work) {
        return start_guest_thread("heapkit-worker", std::move(work));
    });
    state->loop_thread =
        start_guest_thread("heapkit-http", [loop = state->loop.get()] { loop->run(); });
    return std::unique_ptr<Server>(new Server(std::move(state)));
}

} // namespace heapkit::runtime
