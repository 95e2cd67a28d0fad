// SPDX-License-Identifier: MIT
#include "heapkit/util/worker_pool.hpp"

#include <system_error>

namespace heapkit {

WorkerPool::WorkerPool(unsigned threads, StartThread start)
    : m_most(threads)
    , m_start(std::move(start)) {}

WorkerPool::~WorkerPool() {
    stop();
}

bool WorkerPool::post(Job job) {
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping) {
            return false;
        }
        m_jobs.push_back(std::move(job));
        if (m_free < m_jobs.size() && m_threads.size() < m_most) {
            // Under the lock, so that stop() never joins a list being added to.
            try {
                m_threads.push_back(m_start([this] { work(); }));
            } catch (const std::system_error&) {
                if (m_threads.empty()) {
                    m_jobs.pop_back();
                    return false;
                }
            }
        }
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
    std::unique_lock lock(m_mutex);
    ++m_free;
    for (;;) {
        m_ready.wait(lock, [&] { return m_stopping || !m_jobs.empty(); });
        if (m_stopping) {
            return;
        }
        Job job = std::move(m_jobs.front());
        m_jobs.pop_front();
        --m_free;
        lock.unlock();
        HandOver hand_over = job();
        lock.lock();
        ++m_free;
        if (hand_over) {
            lock.unlock();
            hand_over();
            lock.lock();
        }
    }
}

} // namespace heapkit
