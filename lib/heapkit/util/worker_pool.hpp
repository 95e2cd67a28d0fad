// SPDX-License-Identifier: MIT
// The workers that run the Handler for pages that answer at once, so that the event loop
// never waits on a page (the pages that wait out a window: waiting_room.hpp).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace heapkit::runtime::http {

class WorkerPool {
public:
    explicit WorkerPool(unsigned threads);
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

} // namespace heapkit::runtime::http
