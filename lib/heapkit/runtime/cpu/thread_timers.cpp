// SPDX-License-Identifier: MIT
#include "heapkit/runtime/cpu/thread_timers.hpp"

#include "heapkit/util/unique_fd.hpp"

#include <algorithm>
#include <charconv>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <memory>
#include <string_view>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

// The kernel's clock id for thread `tid`'s CPU time (MAKE_THREAD_CPUCLOCK with
// CPUCLOCK_SCHED, as glibc's pthread_getcpuclockid makes it for a pthread_t): any thread
// of the process may arm a timer on it.
clockid_t thread_cpu_clock(pid_t tid) {
    constexpr clockid_t per_thread = 4;
    constexpr clockid_t scheduler_time = 2;
    return static_cast<clockid_t>((~static_cast<unsigned>(tid)) << 3) | per_thread | scheduler_time;
}

// True when thread `tid` blocks SIGPROF (its SigBlk line in /proc), or is gone.
bool blocks_sigprof(pid_t tid) {
    std::string path = fmt::format("/proc/self/task/{}/status", tid);
    UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!file) {
        return true;
    }
    char buffer[4096];
    ssize_t size = ::read(file.get(), buffer, sizeof(buffer));
    if (size <= 0) {
        return true;
    }
    std::string_view status(buffer, static_cast<size_t>(size));
    size_t at = status.find("\nSigBlk:");
    if (at == std::string_view::npos) {
        return false;
    }
    std::string_view rest = status.substr(at + 8);
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) {
        rest.remove_prefix(1);
    }
    uint64_t mask = 0;
    std::from_chars(rest.data(), rest.data() + rest.size(), mask, 16);
    return (mask & (uint64_t{1} << (SIGPROF - 1))) != 0;
}

struct DirClose {
    void operator()(DIR* dir) const { closedir(dir); }
};

std::vector<pid_t> threads_of_this_process() {
    std::vector<pid_t> tids;
    std::unique_ptr<DIR, DirClose> dir(opendir("/proc/self/task"));
    if (!dir) {
        return tids;
    }
    while (dirent* entry = readdir(dir.get())) {
        std::string_view name = entry->d_name;
        pid_t tid = 0;
        auto parsed = std::from_chars(name.data(), name.data() + name.size(), tid);
        if (parsed.ec == std::errc() && parsed.ptr == name.data() + name.size() && tid > 0) {
            tids.push_back(tid);
        }
    }
    return tids;
}

} // namespace

ThreadTimers::ThreadTimers(unsigned frequency)
    : m_interval_nanos(1'000'000'000L / static_cast<long>(std::max(1u, frequency))) {}

ThreadTimers::~ThreadTimers() {
    disarm();
}

size_t ThreadTimers::arm_new_threads() {
    for (pid_t tid : threads_of_this_process()) {
        bool armed = std::any_of(m_armed.begin(), m_armed.end(),
                                 [tid](const Armed& timer) { return timer.tid == tid; });
        // A thread blocking SIGPROF now is looked at again next time: glibc starts every
        // new thread with all signals blocked until it has set itself up.
        if (armed || blocks_sigprof(tid)) {
            continue;
        }
        sigevent event{};
        event.sigev_notify = SIGEV_THREAD_ID;
        event.sigev_signo = SIGPROF;
        event._sigev_un._tid = tid; // sigev_notify_thread_id, which glibc 2.36 does not spell
        timer_t timer{};
        if (timer_create(thread_cpu_clock(tid), &event, &timer) != 0) {
            continue; // gone since the listing, or out of timers
        }
        itimerspec spec{};
        spec.it_interval.tv_sec = m_interval_nanos / 1'000'000'000L;
        spec.it_interval.tv_nsec = m_interval_nanos % 1'000'000'000L;
        spec.it_value = spec.it_interval;
        if (timer_settime(timer, 0, &spec, nullptr) != 0) {
            timer_delete(timer);
            continue;
        }
        m_armed.push_back({tid, timer});
    }
    return m_armed.size();
}

void ThreadTimers::disarm() {
    for (const Armed& armed : m_armed) {
        timer_delete(armed.timer);
    }
    m_armed.clear();
}

} // namespace heapkit::runtime
