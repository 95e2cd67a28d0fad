// SPDX-License-Identifier: MIT
// A thread of its own for each page that waits out a window (Handler::waits: CPU profiles,
// heap deltas, the allocation log): a 30 s profile holds no worker. Bounded, and cut short
// when the server stops.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace heapkit::runtime::http {

class WaitingRoom {
public:
    explicit WaitingRoom(unsigned max_waiting);
    ~WaitingRoom(); // stop()
    WaitingRoom(const WaitingRoom&) = delete;
    WaitingRoom& operator=(const WaitingRoom&) = delete;

    // Runs `page` on a thread of its own; false when max_waiting run already, or stopping.
    bool enter(std::function<void()> page);
    // For Request::wait: sleeps `window`, or less once stopping.
    void wait(std::chrono::milliseconds window);
    // For Request::stopping.
    bool stopping();
    // Cuts every window short and joins the threads (their pages answer 503 at once).
    void stop();

private:
    struct Guest {
        std::thread thread;
        bool done = false;
    };
    void join_finished(std::unique_lock<std::mutex>& lock);

    std::mutex m_mutex;
    std::condition_variable m_woken;
    unsigned m_max;
    unsigned m_running = 0;
    bool m_stopping = false;
    std::list<Guest> m_guests;
};

} // namespace heapkit::runtime::http
