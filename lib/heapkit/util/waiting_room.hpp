// SPDX-License-Identifier: MIT
// A thread of its own for each page that waits out a window (Handler::waits: CPU profiles,
// heap deltas, the allocation log): a 30 s profile holds no worker. Bounded, and cut short
// when the server stops or when the page's client has gone (left waiting, a profile nobody
// will read would hold the one CPU profiler of the process for its whole window).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
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

    // Runs `page`, the answer to connection `id`, on a thread of its own; false when
    // max_waiting run already, or stopping.
    bool enter(uint64_t id, std::function<void()> page);
    // For Request::wait of connection `id`'s page: sleeps `window`, or less once stopping
    // or once its client has gone.
    void wait(uint64_t id, std::chrono::milliseconds window);
    // For Request::stopping of connection `id`'s page.
    bool stopping(uint64_t id);
    // Connection `id`'s client has gone: its page's window ends now (nothing if it has none).
    void abandon(uint64_t id);
    // Cuts every window short and joins the threads (their pages answer 503 at once).
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
    unsigned m_max;
    unsigned m_running = 0;
    bool m_stopping = false;
    std::list<Guest> m_guests;
};

} // namespace heapkit::runtime::http
