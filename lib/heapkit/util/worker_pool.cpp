// SPDX-License-Identifier: MIT
#include "heapkit/util/worker_pool.hpp"

namespace heapkit {

WorkerPool::WorkerPool(unsigned threads, const StartThread& start) {
    for (unsigned i = 0; i < threads; ++i) {
        m_threads.push_back(start([this] { work(); }));
    }
}

WorkerPool::~WorkerPool() {
    stop();
}

bool WorkerPool::post(std::function<void()> job) {
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping) {
            return false;
        }
        m_jobs.push_back(std::move(job));
    }
    m_ready.notify_one();
    return true;
}

void WorkerPool::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_jobs.clear();
    }
    m_ready.notify_all();
    for (std::thread& thread : m_threads) {
        if (thread.joinable()) {
            thread.join();
        }
    }
}

void WorkerPool::work() {
    for (;;) {
        std::function<void()> job;
        {
            std::unique_lock lock(m_mutex);
            m_ready.wait(lock, [&] { return m_stopping || !m_jobs.empty(); });
            if (m_stopping) {
                return;
            }
            job = std::move(m_jobs.front());
            m_jobs.pop_front();
        }
        job();
    }
}

} // namespace heapkit
