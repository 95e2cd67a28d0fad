// SPDX-License-Identifier: MIT
#include "heapkit/runtime/server.hpp"

#include "heapkit/runtime/access.hpp"
#include "heapkit/runtime/profiler.hpp"
#include "heapkit/util/try.hpp"

#include <arpa/inet.h>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fmt/format.h>
#include <microhttpd.h>
#include <mutex>
#include <netinet/in.h>
#include <optional>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

// Sampling off in a thread (once) before it does any server work: request parsing and
// response bodies stay out of the profiles being served. (prof.thread_active_init does
// not do it: jemalloc reads it at a thread's first sample, after the threads are made.)
void stop_sampling_this_thread() {
    // No thread_local: in a dlopened library (the agent) its first use allocates through
    // __tls_get_addr, sampled, before sampling is off. A mallctl read per call instead.
    if (auto profiler = Profiler::find()) {
        if (auto active = profiler->thread_active(); !active || *active) {
            static_cast<void>(profiler->make_thread_a_guest());
        }
    }
}

// One request, from its request line to its answer (MHD's per-request "con_cls").
struct Exchange {
    std::string target; // as the request line has it: path and query, still encoded
    bool headers_checked = false;
    bool too_large = false; // a chunked body went over max_body: the rest is dropped
    std::string body;
    std::optional<Response> answered; // by a thread of its own (wait_apart), to be sent
};

struct DaemonStop {
    void operator()(MHD_Daemon* daemon) const { MHD_stop_daemon(daemon); }
};

// What MHD's callbacks (on its threads) share.
struct State {
    ServerOptions options;
    Handler handler;
    std::atomic<unsigned> connections{0};
    // Pages answered on threads of their own (wait_apart): how many run, and a stop that
    // cuts their windows short and waits for them.
    std::mutex mutex;
    std::condition_variable woken;
    unsigned waiting = 0;
    bool stopping = false;
};

Response text(int status, std::string body) {
    Response response;
    response.status = status;
    response.body = std::move(body);
    return response;
}

MHD_Result send(MHD_Connection* connection, Response response) {
    auto* body = new std::string(std::move(response.body));
    MHD_Response* out = MHD_create_response_from_buffer_with_free_callback_cls(
        body->size(), body->data(), [](void* owned) { delete static_cast<std::string*>(owned); },
        body);
    if (out == nullptr) {
        delete body;
        return MHD_NO;
    }
    MHD_add_response_header(out, MHD_HTTP_HEADER_CONTENT_TYPE, response.content_type.c_str());
    for (const auto& [key, value] : response.headers) {
        MHD_add_response_header(out, key.c_str(), value.c_str());
    }
    MHD_Result queued = MHD_queue_response(connection, static_cast<unsigned>(response.status), out);
    MHD_destroy_response(out);
    return queued;
}

std::optional<size_t> content_length(MHD_Connection* connection) {
    const char* value =
        MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    size_t length = 0;
    if (value == nullptr ||
        std::from_chars(value, value + std::strlen(value), length).ec != std::errc()) {
        return std::nullopt;
    }
    return length;
}

// The answer a request gets as soon as its headers are in, before any body is read:
// too many connections, too many headers, no token, a declared body over the limit.
std::optional<Response> refuse_early(const State& state, MHD_Connection* connection) {
    const ServerOptions& options = state.options;
    if (state.connections.load() > options.max_connections) {
        Response busy = text(503, "too many connections; try again\n");
        busy.headers["Retry-After"] = "1";
        return busy;
    }
    int headers = MHD_get_connection_values(connection, MHD_HEADER_KIND, nullptr, nullptr);
    if (headers < 0 || static_cast<size_t>(headers) > options.max_headers) {
        return text(431, fmt::format("more than {} header fields\n", options.max_headers));
    }
    if (!options.bearer_token.empty()) {
        const char* authorization =
            MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        if (authorization == nullptr ||
            !bearer_token_matches(authorization, options.bearer_token)) {
            Response denied = text(401, "missing or wrong bearer token\n");
            denied.headers["WWW-Authenticate"] = "Bearer realm=\"heapkit\"";
            return denied;
        }
    }
    if (auto length = content_length(connection); length && *length > options.handler.max_body) {
        return text(413, fmt::format("request body over {} bytes\n", options.handler.max_body));
    }
    return std::nullopt;
}

Request to_request(MHD_Connection* connection, const char* path, const char* method,
                   Exchange& exchange) {
    Request request;
    request.method = method;
    request.path = path;
    size_t question = exchange.target.find('?');
    if (question != std::string::npos) {
        request.query = exchange.target.substr(question + 1);
    }
    MHD_get_connection_values(
        connection, MHD_HEADER_KIND,
        [](void* headers, MHD_ValueKind, const char* key, const char* value) {
            (*static_cast<std::map<std::string, std::string>*>(headers))[key] = value ? value : "";
            return MHD_YES;
        },
        &request.headers);
    request.body = std::move(exchange.body);
    return request;
}

// A page that waits out a window (a CPU profile of 30 s) would hold an event thread, and
// every connection that thread serves, that long. It runs on a thread of its own while
// its connection is suspended; MHD calls answer() again once it is resumed.
MHD_Result wait_apart(State& state, MHD_Connection* connection, Exchange& exchange,
                      Request request) {
    {
        std::lock_guard lock(state.mutex);
        if (state.stopping || state.waiting >= state.options.max_waiting) {
            Response busy = text(503, fmt::format("{} profiles are being taken; try again\n",
                                                  state.options.max_waiting));
            busy.headers["Retry-After"] = "1";
            return send(connection, std::move(busy));
        }
        ++state.waiting;
    }
    request.wait = [&state](std::chrono::milliseconds window) {
        std::unique_lock lock(state.mutex);
        state.woken.wait_for(lock, window, [&] { return state.stopping; });
    };
    request.stopping = [&state] {
        std::lock_guard lock(state.mutex);
        return state.stopping;
    };
    MHD_suspend_connection(connection);
    std::thread([&state, connection, &exchange, request = std::move(request)] {
        stop_sampling_this_thread();
        exchange.answered = state.handler.handle(request);
        MHD_resume_connection(connection); // before Server::stop() can end the daemon
        std::lock_guard lock(state.mutex);
        --state.waiting;
        state.woken.notify_all();
    }).detach();
    return MHD_YES;
}

MHD_Result answer(void* cls, MHD_Connection* connection, const char* path, const char* method,
                  const char*, const char* upload, size_t* upload_size, void** context) {
    stop_sampling_this_thread();
    auto& state = *static_cast<State*>(cls);
    auto& exchange = *static_cast<Exchange*>(*context);
    if (!exchange.headers_checked) {
        exchange.headers_checked = true;
        if (auto refusal = refuse_early(state, connection)) {
            return send(connection, std::move(*refusal));
        }
        return MHD_YES; // the body, if any, comes next
    }
    if (exchange.answered) { // resumed: its own thread has answered
        Response response = std::move(*exchange.answered);
        exchange.answered.reset();
        return send(connection, std::move(response));
    }
    if (*upload_size != 0) {
        // Only a chunked body can get here over the limit: a declared length was checked.
        exchange.too_large = exchange.too_large ||
                             exchange.body.size() + *upload_size > state.options.handler.max_body;
        if (!exchange.too_large) {
            exchange.body.append(upload, *upload_size);
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (exchange.too_large) {
        return send(connection, text(413, fmt::format("request body over {} bytes\n",
                                                      state.options.handler.max_body)));
    }
    Request request = to_request(connection, path, method, exchange);
    if (Handler::waits(request)) {
        return wait_apart(state, connection, exchange, std::move(request));
    }
    return send(connection, state.handler.handle(request));
}

void* begin_exchange(void*, const char* target, MHD_Connection*) {
    stop_sampling_this_thread();
    auto* exchange = new Exchange;
    exchange->target = target;
    return exchange;
}

void end_exchange(void*, MHD_Connection*, void** context, MHD_RequestTerminationCode) {
    delete static_cast<Exchange*>(*context);
    *context = nullptr;
}

void count_connection(void* cls, MHD_Connection*, void**, MHD_ConnectionNotificationCode code) {
    auto& state = *static_cast<State*>(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        ++state.connections;
    } else {
        --state.connections;
    }
}

MHD_Result accept_any(void*, const sockaddr*, socklen_t) {
    stop_sampling_this_thread(); // the connection's memory is allocated in this thread next
    return MHD_YES;
}

// The socket address to bind; nullopt when `address` is not a numeric IPv4 or IPv6 one.
std::optional<sockaddr_storage> socket_address(const std::string& address, int port) {
    sockaddr_storage storage{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    std::string bare = address;
    if (inet_pton(AF_INET, bare.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(static_cast<uint16_t>(port));
        return storage;
    }
    if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') {
        bare = bare.substr(1, bare.size() - 2);
    }
    if (inet_pton(AF_INET6, bare.c_str(), &v6->sin6_addr) != 1) {
        return std::nullopt;
    }
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    return storage;
}

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

} // namespace

struct Server::State {
    runtime::State shared;
    std::unique_ptr<MHD_Daemon, DaemonStop> daemon; // last: stopped before the rest goes
    int port = 0;
    int listen_fd = -1;
    struct stat listener {}; // what listen_fd was when the server started
};

namespace {

int listen_fd_of(MHD_Daemon* daemon) {
    const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    return info != nullptr ? info->listen_fd : MHD_INVALID_SOCKET;
}

} // namespace

bool is_loopback(const std::string& address) {
    return is_loopback_address(address);
}

Server::Server(std::unique_ptr<State> state)
    : m_state(std::move(state)) {}

Server::~Server() {
    stop();
}

int Server::port() const {
    return m_state->port;
}

void Server::stop() {
    if (m_state) {
        runtime::State& shared = m_state->shared;
        {
            // Windows cut short; their threads answer and resume their connections while
            // the daemon still runs.
            std::unique_lock lock(shared.mutex);
            shared.stopping = true;
            shared.woken.notify_all();
            shared.woken.wait(lock, [&] { return shared.waiting == 0; });
        }
        m_state->daemon.reset(); // closes every connection and joins the threads
    }
}

void Server::abandon_after_fork() {
    if (!m_state) {
        return;
    }
    if (m_state->listen_fd != MHD_INVALID_SOCKET) {
        ::close(m_state->listen_fd);
    }
    static_cast<void>(m_state.release()); // its mutexes and threads were the parent's
}

bool Server::listener_intact() const {
    struct stat now {};
    return m_state && m_state->listen_fd != MHD_INVALID_SOCKET &&
           ::fstat(m_state->listen_fd, &now) == 0 && now.st_dev == m_state->listener.st_dev &&
           now.st_ino == m_state->listener.st_ino;
}

Result<std::unique_ptr<Server>> Server::start(const ServerOptions& options) {
    HEAPKIT_TRY(check_options(options));
    auto bind_to = socket_address(options.address, options.port);
    if (!bind_to) {
        return fail("cannot listen on {}: not a numeric IPv4 or IPv6 address", options.address);
    }
    auto state = std::make_unique<State>();
    state->shared.options = options;
    state->shared.handler = Handler(options.handler);
    // Connections past max_connections are still taken (a few) so that they hear 503
    // rather than nothing; past that, MHD closes them at once.
    unsigned hard_limit = options.max_connections + std::max(16u, options.threads);
    // MHD keeps the request line and headers in the connection's memory pool, with room
    // for reading and for the answer's own headers besides.
    size_t pool_bytes = options.max_header_bytes + 8 * 1024;
    // MHD_USE_ITC: stopping wakes every worker at once; without it a worker waiting in
    // epoll with open connections only noticed at its next timeout (seconds of SIGTERM).
    // MHD_ALLOW_SUSPEND_RESUME: pages that wait run apart (wait_apart).
    unsigned flags = MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
                     MHD_ALLOW_SUSPEND_RESUME | (bind_to->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    MHD_Daemon* daemon = MHD_start_daemon(
        flags, static_cast<uint16_t>(options.port), accept_any, nullptr, answer, &state->shared,
        MHD_OPTION_SOCK_ADDR, reinterpret_cast<const sockaddr*>(&*bind_to),
        MHD_OPTION_THREAD_POOL_SIZE, options.threads, MHD_OPTION_CONNECTION_LIMIT, hard_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, options.idle_timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool_bytes, MHD_OPTION_URI_LOG_CALLBACK, begin_exchange,
        nullptr, MHD_OPTION_NOTIFY_COMPLETED, end_exchange, nullptr, MHD_OPTION_NOTIFY_CONNECTION,
        count_connection, &state->shared, MHD_OPTION_END);
    if (daemon == nullptr) {
        return fail("cannot listen on {}:{}", options.address, options.port);
    }
    state->daemon.reset(daemon);
    state->listen_fd = listen_fd_of(daemon);
    if (state->listen_fd != MHD_INVALID_SOCKET) {
        ::fstat(state->listen_fd, &state->listener);
    }
    const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    state->port = info != nullptr ? info->port : options.port;
    return std::unique_ptr<Server>(new Server(std::move(state)));
}

} // namespace heapkit::runtime
