// SPDX-License-Identifier: MIT
#include "heapkit/runtime/server.hpp"

#include "heapkit/runtime/profiler.hpp"

#include <chrono>
#include <cstdlib>
#include <httplib.h>
#include <thread>

namespace heapkit::runtime {
namespace {

// Turns sampling off in a thread (once) before it does any server work.
void stop_sampling_this_thread();

// httplib's thread pool, with every task run unsampled: request parsing and response
// bodies stay out of the profiles being served. (prof.thread_active_init does not do
// it: jemalloc reads it at a thread's first sample, after the pool is made.)
class UnsampledPool : public httplib::TaskQueue {
public:
    void enqueue(std::function<void()> task) override {
        m_pool.enqueue([task = std::move(task)] {
            stop_sampling_this_thread();
            task();
        });
    }
    void shutdown() override { m_pool.shutdown(); }

private:
    httplib::ThreadPool m_pool{CPPHTTPLIB_THREAD_POOL_COUNT};
};

void stop_sampling_this_thread() {
    thread_local bool done = false;
    if (!done) {
        if (auto profiler = Profiler::find()) {
            static_cast<void>(profiler->set_thread_active(false));
        }
        done = true;
    }
}

Request to_request(const httplib::Request& in) {
    Request request;
    request.method = in.method;
    request.path = in.path;
    size_t question = in.target.find('?');
    if (question != std::string::npos) {
        request.query = in.target.substr(question + 1);
    }
    for (const auto& [key, value] : in.headers) {
        request.headers[key] = value;
    }
    request.body = in.body;
    return request;
}

} // namespace

bool is_loopback(const std::string& address) {
    return address == "localhost" || address == "::1" || address.starts_with("127.");
}

struct Server::State {
    httplib::Server http;
    Handler handler;
    std::string token;
    std::thread thread;
    int port = 0;
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
    if (m_state && m_state->thread.joinable()) {
        m_state->http.stop();
        m_state->thread.join();
    }
}

Result<std::unique_ptr<Server>> Server::start(const ServerOptions& options) {
    if (!options.allow_non_loopback && !is_loopback(options.address)) {
        return fail("refusing to serve heap profiles on {}: heap dumps reveal memory contents; "
                    "bind a loopback address or set allow_non_loopback",
                    options.address);
    }
    auto state = std::make_unique<State>();
    state->handler = Handler(options.handler);
    state->token = options.bearer_token;
    State* shared = state.get();
    size_t max_body = options.handler.max_body;
    auto answer = [shared](const httplib::Request& in, std::string body, bool too_large,
                           httplib::Response& out) {
        Response response;
        auto authorization = in.get_header_value("Authorization");
        if (!shared->token.empty() && authorization != "Bearer " + shared->token) {
            response.status = 401;
            response.body = "missing or wrong bearer token\n";
        } else if (too_large) {
            response.status = 413;
            response.body = "request body too large\n";
        } else {
            Request request = to_request(in);
            request.body = std::move(body);
            response = shared->handler.handle(request);
        }
        out.status = response.status;
        for (const auto& [key, value] : response.headers) {
            out.set_header(key, value);
        }
        out.set_content(response.body, response.content_type.c_str());
    };
    auto serve = [answer](const httplib::Request& in, httplib::Response& out) {
        answer(in, in.body, false, out);
    };
    // Bodies are read here, not by httplib: it would refuse form-encoded bodies over
    // 8 KiB (its compiled-in limit), and jeprof posts thousands of addresses that way.
    auto serve_body = [answer, max_body](const httplib::Request& in, httplib::Response& out,
                                         const httplib::ContentReader& reader) {
        std::string body;
        // A declared length over the limit is refused unread; chunked bodies are cut off
        // while they stream in.
        bool too_large =
            std::strtoull(in.get_header_value("Content-Length").c_str(), nullptr, 10) > max_body;
        reader([&](const char* data, size_t length) {
            too_large = too_large || body.size() + length > max_body;
            if (!too_large) {
                body.append(data, length);
            }
            return !too_large;
        });
        answer(in, std::move(body), too_large, out);
    };
    state->http.new_task_queue = [] { return new UnsampledPool; };
    // Every method goes to the handler, which answers 405 where one does not fit.
    state->http.Get(".*", serve);
    state->http.Delete(".*", serve);
    state->http.Options(".*", serve);
    state->http.Post(".*", serve_body);
    state->http.Put(".*", serve_body);
    state->http.Patch(".*", serve_body);
    state->http.set_payload_max_length(options.handler.max_body + 1);
    int port = options.port == 0
                   ? state->http.bind_to_any_port(options.address)
                   : (state->http.bind_to_port(options.address, options.port) ? options.port : -1);
    if (port < 0) {
        return fail("cannot listen on {}:{}", options.address, options.port);
    }
    state->port = port;
    state->thread = std::thread([shared] {
        stop_sampling_this_thread();
        shared->http.listen_after_bind();
    });
    // The socket is bound, so no connection is lost meanwhile; wait only so that stop()
    // right after start() finds the loop running.
    while (!shared->http.is_running()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return std::unique_ptr<Server>(new Server(std::move(state)));
}

} // namespace heapkit::runtime
