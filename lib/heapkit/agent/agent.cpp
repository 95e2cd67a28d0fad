// SPDX-License-Identifier: MIT
// libheapkit-agent-core.so: the runtime's server inside a program that was not built with
// it. The loader libheapkit-agent.so (shim.cpp), which LD_PRELOAD names, loads it in the
// process the operator meant once jemalloc and heap profiling are found, and calls
// heapkit_agent_core_serve on its thread. A guest in someone else's process, so:
//  - every thread of ours blocks every signal: the host's signals reach the host's threads;
//  - a fork()ed child closes its copy of the listening socket and serves nothing, unless
//    HEAPKIT_FOLLOW_FORKS=1 (then it serves on the next free port after its parent's);
//  - the server stops at exit() (atexit) in milliseconds;
//  - nothing but heapkit_agent_core_serve is exported (core.map), and what the agent
//    links statically stays hidden (meson.build), so no symbol of the host binds to ours.
#include "heapkit/agent/agent_config.hpp"
#include "heapkit/agent/process_registry.hpp"
#include "heapkit/runtime/guest/threads.hpp"
#include "heapkit/runtime/handler.hpp"
#include "heapkit/runtime/mallctl.hpp"
#include "heapkit/runtime/notices.hpp"
#include "heapkit/runtime/peaks/peak_watcher.hpp"
#include "heapkit/runtime/profiler.hpp"
#include "heapkit/runtime/server.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace heapkit::agent {
namespace {

// Ports a followed child tries after its parent's before it gives up.
constexpr int follow_ports = 16;

struct Agent {
    AgentConfig config;
    std::mutex mutex; // guards what follows; held across fork() (atfork handlers)
    std::unique_ptr<runtime::Server> server;
    int parent_port = -1;              // in a followed child: the port its parent serves on
    ProcessRegistry registry{nullptr}; // the tree's serving processes (the loader's page)
    bool exiting = false;
    bool exit_registered = false;
};

// Never destroyed: a server thread may look at it while the process exits.
Agent* g_agent = nullptr;

void say(const std::string& line) {
    if (g_agent != nullptr && g_agent->config.quiet) {
        return;
    }
    std::string text = fmt::format("heapkit-agent[{}]: {}\n", getpid(), line);
    // stderr's FILE may be the host's to lock or replace: write(2) the line whole.
    static_cast<void>(::write(STDERR_FILENO, text.data(), text.size()));
}

// Why this process cannot be served, if it cannot: no jemalloc, or no heap profiling.
std::optional<std::string> why_inert() {
    auto profiler = runtime::Profiler::find();
    if (!profiler) {
        return profiler.error().message;
    }
    auto enabled = profiler->enabled();
    if (!enabled || !*enabled) {
        return fmt::format("jemalloc's heap profiling is off in {}; start the program with "
                           "{}=prof:true",
                           profiler->mallctl().copy().object, profiler->mallctl().conf_variable());
    }
    return std::nullopt;
}

Result<runtime::ServerOptions> server_options(const AgentConfig& config) {
    if (!runtime::is_loopback(config.address) && config.token_file.empty()) {
        return fail("HEAPKIT_LISTEN={}: serving beyond loopback needs HEAPKIT_TOKEN_FILE (heap "
                    "dumps reveal memory contents)",
                    config.address);
    }
    runtime::ServerOptions options;
    options.address = config.address;
    options.port = config.port;
    options.threads = 2; // a guest's share: slow clients hold none of them anyway
    options.handler.allow_control = config.control;
    options.public_name = config.public_name;
    options.warn = [](const std::string& line) { say(line); }; // quiet: say says nothing
    options.handler.allow_cpu_profiles = config.cpu;
    if (!config.token_file.empty()) {
        auto token = read_token(config.token_file);
        if (!token) {
            return tl::unexpected(token.error());
        }
        options.bearer_token = *token;
        options.allow_non_loopback = true;
    }
    return options;
}

// The server on the configured port or, in a followed child, on the first free port
// after its parent's.
Result<std::unique_ptr<runtime::Server>> bind_server(runtime::ServerOptions options,
                                                     int parent_port) {
    if (parent_port < 0 || options.port == 0) {
        return runtime::Server::start(options);
    }
    for (int port = parent_port + 1; port <= parent_port + follow_ports && port <= 65535; ++port) {
        options.port = port;
        if (auto server = runtime::Server::start(options)) {
            return server;
        }
    }
    return fail("no free port from {} to {}", parent_port + 1, parent_port + follow_ports);
}

void stop_at_exit() {
    std::unique_ptr<runtime::Server> server;
    {
        std::lock_guard lock(g_agent->mutex);
        g_agent->exiting = true;
        g_agent->registry.remove();
        server = std::move(g_agent->server);
    }
    if (server && !server->listener_intact()) {
        // The program closed our descriptors (the server has said so and stopped using
        // them): nothing left to join in a hurry at exit.
        static_cast<void>(server.release());
        return;
    }
    server.reset(); // cuts running profiles short and joins the server's threads
}

// Serves on this thread's behalf: binds, and hands the server to the Agent.
void serve_now() {
    Agent& agent = *g_agent;
    int parent_port;
    {
        std::lock_guard lock(agent.mutex);
        parent_port = agent.parent_port;
    }
    if (auto reason = why_inert()) {
        say(*reason + ": not serving");
        return;
    }
    auto options = server_options(agent.config);
    if (!options) {
        say(options.error().message + ": not serving");
        return;
    }
    auto server = bind_server(*options, parent_port);
    if (!server) {
        say(fmt::format("{}: not serving; the program runs on", server.error().message));
        return;
    }
    int port = (*server)->port();
    std::lock_guard lock(agent.mutex);
    if (agent.exiting) {
        return; // exit() is under way: the server goes with this thread's return
    }
    agent.server = std::move(*server);
    if (!agent.exit_registered) {
        agent.exit_registered = std::atexit(stop_at_exit) == 0;
    }
    const std::string& address = agent.config.address;
    agent.registry.add(address, port, parent_port < 0);
    bool v6 = address.find(':') != std::string::npos;
    auto served = runtime::Mallctl::find();
    // The program served, by name: behind a wrapper (timeout, sudo, a script) it is not
    // the command the operator typed.
    say(fmt::format("serving http://{}{}{}:{}/ ({}; {})", v6 ? "[" : "", address, v6 ? "]" : "",
                    port, program_invocation_short_name,
                    served ? served->description() : served.error().message));
    if (parent_port < 0) { // said once, by the first process of the tree
        for (const std::string& note : runtime::other_copies_notes()) {
            say("also " + note);
        }
    }
}

// A followed child's server thread (blocking every signal, jemalloc's sampling off):
// past the child's start, where programs close what they did not open
// (AgentConfig::start_delay_ms), it serves.
void start_serving() {
    try {
        runtime::start_guest_thread("heapkit-agent", [] {
            std::this_thread::sleep_for(std::chrono::milliseconds(g_agent->config.start_delay_ms));
            serve_now();
        }).detach();
    } catch (const std::system_error&) {
        say("cannot start a thread: not serving");
    }
}

// The peak watcher, when HEAPKIT_PEAKS_DIR asks for it: a bad setting or directory is one
// line, and the agent serves (and the program runs) without it. Never stopped: its
// captures are for the process's last moments, and its thread blocks every signal.
void start_peak_watcher() {
    auto options = read_peaks_config([](const char* name) { return std::getenv(name); });
    if (!options) {
        say(options.error().message + ": no peak captures");
        return;
    }
    if (!*options) {
        return;
    }
    if (why_inert()) {
        return; // serve_now says why
    }
    (*options)->say = [](const std::string& line) { say(line); };
    auto watcher = runtime::PeakWatcher::start(std::move(**options));
    if (!watcher) {
        say(watcher.error().message + ": no peak captures");
        return;
    }
    static_cast<void>(watcher->release());
}

void before_fork() {
    g_agent->mutex.lock();
}

void after_fork_in_parent() {
    g_agent->mutex.unlock();
}

// Only the forking thread lives on in the child: the server's threads are gone.
void after_fork_in_child() {
    Agent& agent = *g_agent;
    int port = agent.server ? agent.server->port() : agent.config.port;
    if (agent.server) {
        agent.server->abandon_after_fork();
        agent.server.reset();
    }
    bool follow = agent.config.follow_forks && !agent.exiting;
    agent.parent_port = port;
    agent.mutex.unlock();
    if (follow) {
        start_serving();
    }
}

} // namespace
} // namespace heapkit::agent

// The loader's call, on its thread (past the start delay, jemalloc's sampling off): reads
// the configuration once, watches for fork(), and serves.
// `parent_port`: -1 in the first process; in a child forked before the core was loaded,
// -2 (its parent serves on the configured port). `registry`: the page the loader shared
// with the tree (may be null).
extern "C" __attribute__((visibility("default"))) void heapkit_agent_core_serve(int parent_port,
                                                                                void* registry) {
    using namespace heapkit::agent;
    if (g_agent == nullptr) {
        auto config = read_config([](const char* name) { return std::getenv(name); });
        if (!config) {
            say(config.error().message + ": not serving");
            return;
        }
        g_agent = new Agent{};
        g_agent->config = std::move(*config);
        g_agent->registry = ProcessRegistry(registry);
        heapkit::runtime::set_serving_processes_source([] { return g_agent->registry.list(); });
        // The runtime's notices (a failing indexer, stripped modules) as the agent's lines.
        heapkit::runtime::set_notice_sink(say);
        if (pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child) != 0) {
            say("cannot watch for fork(): not serving");
            return;
        }
        start_peak_watcher();
    }
    {
        std::lock_guard lock(g_agent->mutex);
        g_agent->parent_port = parent_port == -2 ? g_agent->config.port : parent_port;
    }
    serve_now();
}
