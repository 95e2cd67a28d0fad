// SPDX-License-Identifier: MIT
// A thread of its own for each job that waits out a window, bounded, each window cut short
// when the room stops or when its job is abandoned. The runtime's server runs its pages
// that wait here (Handler::waits: CPU profiles, heap deltas, the allocation log), so that
// a 30 s profile holds no worker, and a page whose client has gone ends at once (left
// waiting, a profile nobody will read would hold the process's one CPU profiler).
#pragma once

#include "heapkit/util/start_thread.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace heapkit {

class WaitingRoom {
public:
    // At most `max_waiting` pages at once, each on a thread made by `start`.
    WaitingRoom(unsigned max_waiting, StartThread start);
    ~WaitingRoom(); // stop()
    WaitingRoom(const WaitingRoom&) = delete;
    WaitingRoom& operator=(const WaitingRoom&) = delete;

    // Runs `page`, job `id` (the server's: a connection's answer), on a thread of its own;
    // false when max_waiting run already, or stopping.
    bool enter(uint64_t id, std::function<void()> page);
    // For job `id` (the server's Request::wait): sleeps `window`, or less once stopping or
    // once the job is abandoned.
    void wait(uint64_t id, std::chrono::milliseconds window);
    // Whether job `id`'s window is cut short (the server's Request::stopping).
    bool stopping(uint64_t id);
    // Job `id` is abandoned (the server's: its client has gone): its window ends now
    // (nothing if it has none).
    void abandon(uint64_t id);
    // Cuts every window short and joins the threads (the server's pages answer 503 at once).
    void stop();

private:
    struct Guest {
        uint64_t id = 0;
        std::thread thread;
        bool done = false;
        bool abandoned = false;
    };
    bool cut_short(uint64_t id) const; // with m_mutex held
    void join_finished(std::unique_lock<std::mutex>& lock);

    std::mutex m_mutex;
    std::condition_variable m_woken;
    StartThread m_start;
    unsigned m_max;
    unsigned m_running = 0;
    bool m_stopping = false;
    std::list<Guest> m_guests;
};

} // namespace heapkit
