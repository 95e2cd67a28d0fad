// SPDX-License-Identifier: MIT
// One CPU-time timer per thread of this process, each sending SIGPROF to its own thread
// as that thread spends CPU (as Go does since 1.18 and gperftools with
// CPUPROFILE_PER_THREAD_TIMERS). A process-wide timer lets the kernel pick any thread
// for the signal: samples land on threads that were asleep, and their sleeps end in
// EINTR. A thread's own CPU clock only runs while it runs.
#pragma once

#include <ctime>
#include <sys/types.h>
#include <vector>

namespace heapkit::runtime {

class ThreadTimers {
public:
    explicit ThreadTimers(unsigned frequency);
    ~ThreadTimers(); // every timer deleted
    ThreadTimers(const ThreadTimers&) = delete;
    ThreadTimers& operator=(const ThreadTimers&) = delete;

    // Arms a timer for every thread not armed yet (threads started since the last call
    // included), but for threads that block SIGPROF: the server's and the profiler's own,
    // whose CPU is not the program's, and threads of the program that want no signal.
    // Returns how many threads are armed in all.
    size_t arm_new_threads();

    // Deletes every timer now (the destructor then has nothing left to do).
    void disarm();

private:
    struct Armed {
        pid_t tid;
        timer_t timer;
    };
    long m_interval_nanos;
    std::vector<Armed> m_armed;
};

} // namespace heapkit::runtime
