// SPDX-License-Identifier: MIT
#include "heapkit/runtime/export/indexer.hpp"

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
#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <string_view>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

constexpr size_t max_output = 64 * 1024; // of its error lines: a few files' worth
// heapkit-index processes at once, one per processor up to this: the first profile waits
// for the slowest (CPython's executable with its DWARF, libc with its), not for the sum.
constexpr size_t max_indexers = 4;

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

// The heapkit-index to run when none is configured: this build's own when this code was
// loaded from its build tree (a clone's agent, before any install), else the installed
// one; empty when that is absent, so that frames are named in process without a word.
std::string default_indexer() {
    Dl_info self{};
    if (::dladdr(reinterpret_cast<void*>(&default_indexer), &self) != 0 &&
        self.dli_fname != nullptr) {
        std::unique_ptr<char, decltype(&std::free)> file(::realpath(self.dli_fname, nullptr),
                                                         &std::free);
        if (file && std::string_view(file.get()).starts_with(HEAPKIT_BUILD_ROOT "/")) {
            return ::access(HEAPKIT_BUILD_INDEXER, X_OK) == 0 ? HEAPKIT_BUILD_INDEXER : "";
        }
    }
    return ::access(HEAPKIT_INDEXER_PATH, X_OK) == 0 ? HEAPKIT_INDEXER_PATH : "";
}

} // namespace

const IndexerSettings& indexer_settings() {
    static const IndexerSettings settings = [] {
        IndexerSettings read;
        const char* program = std::getenv("HEAPKIT_INDEXER");
        read.program = program != nullptr ? program : default_indexer();
        read.cache_directory = default_cache_directory();
        return read;
    }();
    return settings;
}

namespace {

// One heapkit-index process under way: its pid and the pipe its output comes through.
struct Child {
    pid_t pid = 0;
    UniqueFd output;
    std::string text; // up to max_output bytes
};

// Starts `settings.program` on `paths`; nullopt and a sentence in `problems` when it cannot.
std::optional<Child> spawn_indexer(const IndexerSettings& settings,
                                   const std::vector<std::string>& paths,
                                   std::vector<std::string>& problems) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) {
        problems.push_back(
            fmt::format("cannot run {}: pipe: {}", settings.program, std::strerror(errno)));
        return std::nullopt;
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
    setup.default_signals(); // the host's blocked and ignored signals are not the indexer's
    posix_spawn_file_actions_addopen(setup.actions(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(setup.actions(), writing.get(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(setup.actions(), writing.get(), STDERR_FILENO);
    // Nothing else of the host's: its sockets and files (descriptors without
    // close-on-exec) would stay open, and a port bound, for as long as the indexer runs.
    posix_spawn_file_actions_addclosefrom_np(setup.actions(), STDERR_FILENO + 1);
    Child child;
    int error = ::posix_spawn(&child.pid, settings.program.c_str(), setup.actions(),
                              setup.attributes(), argv.data(), envp.data());
    if (error != 0) {
        problems.push_back(
            fmt::format("cannot run {}: {}", settings.program, std::strerror(error)));
        return std::nullopt;
    }
    // (`writing` closes here: the child's copy is the only writer left, and its exit ends
    // the reading.)
    child.output = std::move(reading);
    return child;
}

// The children's standard output and error, up to max_output bytes each, until each has
// closed them or the deadline passes.
void read_until(std::vector<Child>& children, std::chrono::steady_clock::time_point deadline) {
    char buffer[4096];
    for (;;) {
        std::vector<pollfd> ready;
        std::vector<Child*> of;
        for (Child& child : children) {
            if (child.output) {
                ready.push_back({child.output.get(), POLLIN, 0});
                of.push_back(&child);
            }
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (ready.empty() || left.count() <= 0) {
            return;
        }
        int polled = ::poll(ready.data(), ready.size(),
                            static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (polled < 0 && errno != EINTR) {
            return;
        }
        for (size_t i = 0; polled > 0 && i < ready.size(); ++i) {
            if (ready[i].revents == 0) {
                continue;
            }
            Child& child = *of[i];
            ssize_t got = ::read(ready[i].fd, buffer, sizeof buffer);
            if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
                child.output.reset(); // closed: that child is done writing
            } else if (got > 0 && child.text.size() < max_output) {
                child.text.append(
                    buffer, std::min(static_cast<size_t>(got), max_output - child.text.size()));
            }
        }
    }
}

// `paths` in up to `jobs` groups of about equal bytes (the largest first, each to the
// lightest group): the indexer's time grows with a file's size, and the first profile
// waits for the slowest group.
std::vector<std::vector<std::string>> split_for(const std::vector<std::string>& paths,
                                                size_t jobs) {
    std::vector<std::pair<uint64_t, std::string>> sized;
    for (const std::string& path : paths) {
        struct stat st {};
        sized.emplace_back(::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0,
                           path);
    }
    std::stable_sort(sized.begin(), sized.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::vector<std::string>> groups(std::max<size_t>(1, std::min(jobs, paths.size())));
    std::vector<uint64_t> load(groups.size(), 0);
    for (auto& [size, path] : sized) {
        size_t lightest =
            static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        load[lightest] += std::max<uint64_t>(size, 1);
        groups[lightest].push_back(std::move(path));
    }
    return groups;
}

// The processors this process may run on, up to `most`.
size_t usable_processors(size_t most) {
    cpu_set_t set;
    CPU_ZERO(&set);
    int count = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return std::clamp<size_t>(static_cast<size_t>(std::max(count, 1)), 1, most);
}

} // namespace

std::vector<std::string> run_indexer(const IndexerSettings& settings,
                                     const std::vector<std::string>& paths) {
    std::vector<std::string> problems;
    std::vector<Child> children;
    for (const auto& group : split_for(paths, usable_processors(max_indexers))) {
        if (auto child = spawn_indexer(settings, group, problems)) {
            children.push_back(std::move(*child));
        }
    }
    auto deadline = std::chrono::steady_clock::now() + settings.deadline;
    read_until(children, deadline);
    for (Child& child : children) {
        bool killed = false;
        std::optional<int> status = wait_for(child.pid, deadline, killed);
        std::vector<std::string> said = problems_in(child.text);
        if (killed) {
            said.push_back(fmt::format("{} was killed after {} s", settings.program,
                                       settings.deadline.count() / 1000));
        } else if (status && WIFSIGNALED(*status)) {
            said.push_back(
                fmt::format("{} ended by signal {}", settings.program, WTERMSIG(*status)));
        } else if (status && WEXITSTATUS(*status) != 0 && said.empty()) {
            said.push_back(
                fmt::format("{} exited with status {}", settings.program, WEXITSTATUS(*status)));
        }
        problems.insert(problems.end(), said.begin(), said.end());
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
    } else if (usable.empty() && !why.empty()) {
        notice_once("cache fallback", fmt::format("cache directory {}", why));
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
