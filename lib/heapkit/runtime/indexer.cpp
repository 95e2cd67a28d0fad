// SPDX-License-Identifier: MIT
#include "heapkit/runtime/indexer.hpp"

#include "heapkit/runtime/notices.hpp"
#include "heapkit/symbolize/index/cache_directory.hpp"
#include "heapkit/util/helper_environment.hpp"
#include "heapkit/util/spawn_setup.hpp"
#include "heapkit/util/text.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <mutex>
#include <optional>
#include <poll.h>
#include <spawn.h>
#include <string_view>
#include <sys/wait.h>
#include <thread>

namespace heapkit::runtime {
namespace {

constexpr size_t max_output = 64 * 1024; // of its error lines: a few files' worth

std::atomic<size_t> runs_ok{0};
std::atomic<size_t> runs_failed{0};

// The child's status once it ends, waiting until `deadline` and killing it then. nullopt
// when it cannot be told: a host that ignores SIGCHLD has its children reaped for it.
std::optional<int> wait_for(pid_t pid, std::chrono::steady_clock::time_point deadline,
                            bool& killed) {
    for (;;) {
        int status = 0;
        pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) {
            return status;
        }
        if (done < 0 && errno != EINTR) {
            return std::nullopt;
        }
        if (!killed && std::chrono::steady_clock::now() >= deadline) {
            ::kill(pid, SIGKILL);
            killed = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

// Its standard output and error, up to max_output bytes, until it closes them or the
// deadline passes.
std::string read_until(int fd, std::chrono::steady_clock::time_point deadline) {
    std::string text;
    char buffer[4096];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            return text;
        }
        pollfd ready{fd, POLLIN, 0};
        int polled = ::poll(&ready, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (polled < 0 && errno != EINTR) {
            return text;
        }
        if (polled <= 0) {
            continue;
        }
        ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
            return text;
        }
        if (got > 0 && text.size() < max_output) {
            text.append(buffer, std::min(static_cast<size_t>(got), max_output - text.size()));
        }
    }
}

// The lines of the indexer's output that say what went wrong ("heapkit-index: error: ...").
std::vector<std::string> problems_in(std::string_view output) {
    std::vector<std::string> problems;
    LineCursor lines(output);
    while (auto line = lines.next()) {
        if (line->find(": error: ") != std::string_view::npos ||
            line->find(": warning: ") != std::string_view::npos) {
            problems.emplace_back(*line);
        }
    }
    return problems;
}

} // namespace

const IndexerSettings& indexer_settings() {
    static const IndexerSettings settings = [] {
        IndexerSettings read;
        const char* program = std::getenv("HEAPKIT_INDEXER");
        read.program = program != nullptr ? program : HEAPKIT_INDEXER_PATH;
        read.cache_directory = default_cache_directory();
        return read;
    }();
    return settings;
}

std::vector<std::string> run_indexer(const IndexerSettings& settings,
                                     const std::vector<std::string>& paths) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) {
        return {fmt::format("cannot run {}: pipe: {}", settings.program, std::strerror(errno))};
    }
    UniqueFd reading(ends[0]);
    UniqueFd writing(ends[1]);
    std::vector<std::string> arguments = {settings.program, "--quiet", "--cache-dir",
                                          settings.cache_directory, "--"};
    arguments.insert(arguments.end(), paths.begin(), paths.end());
    std::vector<std::string> environment = helper_environment();
    std::vector<char*> argv = exec_pointers(arguments);
    std::vector<char*> envp = exec_pointers(environment);

    SpawnSetup setup;
    // The host's blocked and ignored signals are not the indexer's (the example service
    // blocks SIGTERM in every thread, for sigwait).
    sigset_t none;
    sigset_t all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(setup.attributes(), &none);
    posix_spawnattr_setsigdefault(setup.attributes(), &all);
    posix_spawnattr_setflags(setup.attributes(), POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawn_file_actions_addopen(setup.actions(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(setup.actions(), writing.get(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(setup.actions(), writing.get(), STDERR_FILENO);
    // Nothing else of the host's: its sockets and files (descriptors without
    // close-on-exec) would stay open, and a port bound, for as long as the indexer runs.
    posix_spawn_file_actions_addclosefrom_np(setup.actions(), STDERR_FILENO + 1);
    pid_t pid = 0;
    int error = ::posix_spawn(&pid, settings.program.c_str(), setup.actions(), setup.attributes(),
                              argv.data(), envp.data());
    if (error != 0) {
        return {fmt::format("cannot run {}: {}", settings.program, std::strerror(error))};
    }
    writing.reset(); // the child's copy is the only writer left: its exit ends the reading
    auto deadline = std::chrono::steady_clock::now() + settings.deadline;
    std::string output = read_until(reading.get(), deadline);
    bool killed = false;
    std::optional<int> status = wait_for(pid, deadline, killed);
    std::vector<std::string> problems = problems_in(output);
    if (killed) {
        problems.push_back(fmt::format("{} was killed after {} s", settings.program,
                                       settings.deadline.count() / 1000));
    } else if (status && WIFSIGNALED(*status)) {
        problems.push_back(
            fmt::format("{} ended by signal {}", settings.program, WTERMSIG(*status)));
    } else if (status && WEXITSTATUS(*status) != 0 && problems.empty()) {
        problems.push_back(
            fmt::format("{} exited with status {}", settings.program, WEXITSTATUS(*status)));
    }
    return problems;
}

std::string indexer_cache_directory() {
    // Once fallen back, for good: the indexes made there are the ones to read.
    static std::mutex lock;
    static std::string fallback;
    std::lock_guard<std::mutex> held(lock);
    if (!fallback.empty()) {
        return fallback;
    }
    const std::string& configured = indexer_settings().cache_directory;
    std::string why;
    std::string usable = writable_cache_directory(configured, why);
    if (usable != configured && !usable.empty()) {
        fallback = usable;
        notice_once("cache fallback", fmt::format("cache directory {}; address indexes go to {}",
                                                  why.empty() ? "unset" : why, fallback));
    }
    return usable;
}

IndexBuilder own_index_builder() {
    IndexerSettings settings = indexer_settings();
    settings.cache_directory = settings.program.empty() ? "" : indexer_cache_directory();
    if (settings.program.empty() || settings.cache_directory.empty()) {
        return {};
    }
    return [settings](const std::vector<std::string>& paths) {
        // Files a failed run was asked for wait before they are asked for again: each
        // run reads their DWARF (a second of CPU for libc), and a cache the service
        // cannot write fails every time. Meanwhile they are named in process.
        static std::mutex lock;
        static std::map<std::string, std::chrono::steady_clock::time_point> failed;
        constexpr auto wait = std::chrono::minutes(10);
        auto now = std::chrono::steady_clock::now();
        std::vector<std::string> asked;
        {
            std::lock_guard<std::mutex> held(lock);
            for (const std::string& path : paths) {
                auto it = failed.find(path);
                if (it == failed.end() || now - it->second >= wait) {
                    asked.push_back(path);
                }
            }
        }
        if (asked.empty()) {
            return std::vector<std::string>{};
        }
        std::vector<std::string> problems = run_indexer(settings, asked);
        (problems.empty() ? runs_ok : runs_failed).fetch_add(1);
        if (!problems.empty()) {
            // Said once: the same failure every ten minutes would only repeat itself.
            notice_once("indexer failed",
                        fmt::format("{} failed, so frames are named in this process (more "
                                    "memory) for now: {}",
                                    settings.program, fmt::join(problems, "; ")));
            std::lock_guard<std::mutex> held(lock);
            for (const std::string& path : asked) {
                failed[path] = now;
            }
        }
        return problems;
    };
}

std::string indexer_metrics() {
    return fmt::format("# HELP heapkit_indexer_runs_total Runs of heapkit-index for files "
                       "without an address index, by result.\n"
                       "# TYPE heapkit_indexer_runs_total counter\n"
                       "heapkit_indexer_runs_total{{result=\"ok\"}} {}\n"
                       "heapkit_indexer_runs_total{{result=\"failed\"}} {}\n",
                       runs_ok.load(), runs_failed.load());
}

} // namespace heapkit::runtime
