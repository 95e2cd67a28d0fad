// SPDX-License-Identifier: MIT
// A fixed set of threads that run queued jobs in turn. The runtime's server runs its pages
// that answer at once here, so that its event loop never waits on one (those that wait out
// a window: waiting_room.hpp).
#pragma once

#include "heapkit/util/start_thread.hpp"

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace heapkit {

class WorkerPool {
public:
    // `threads` threads, made by `start`.
    WorkerPool(unsigned threads, const StartThread& start);
    ~WorkerPool(); // stop()
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    // Queues `job`; false once stopping.
    bool post(std::function<void()> job);
    // Jobs under way finish, queued ones are dropped; joins the threads.
    void stop();

private:
    void work();

    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<std::function<void()>> m_jobs;
    bool m_stopping = false;
    std::vector<std::thread> m_threads;
};

} // namespace heapkit
