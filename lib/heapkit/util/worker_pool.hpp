// SPDX-License-Identifier: MIT
// Up to a fixed number of threads that run queued jobs in turn. The runtime's server runs
// its pages that answer at once here, so that its event loop never waits on one (those that
// wait out a window: waiting_room.hpp). A thread is made when a job finds none idle, not
// before: in a host, each of the server's threads costs an arena of the host's jemalloc and
// its background thread (a new thread binds one for jemalloc's own metadata), so an idle
// agent that answered one scrape at a time keeps one worker, not all of them. For that, a
// job comes in two parts: its work, then the hand-over of what it made, during which its
// thread already counts as free. A client that asks again as soon as it has an answer (a
// scraper, a test) finds that thread, rather than a second one started because the first
// had not yet come back from handing over (or from what it does after, e.g. giving back
// code pages).
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
    // Up to `threads` threads, made by `start` as jobs need them.
    WorkerPool(unsigned threads, StartThread start);
    ~WorkerPool(); // stop()
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    // A job does its work and returns how to hand over what it made (may be empty).
    using HandOver = std::function<void()>;
    using Job = std::function<HandOver()>;

    // Queues `job`, and makes a thread for it if none is idle or handing over and fewer than
    // `threads` run; false once stopping, or when no thread runs and none could be made.
    bool post(Job job);
    // Jobs under way finish, queued ones are dropped; joins the threads.
    void stop();

private:
    void work();

    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<Job> m_jobs;
    bool m_stopping = false;
    unsigned m_free = 0; // threads waiting for a job or handing one over
    unsigned m_most;
    StartThread m_start;
    std::vector<std::thread> m_threads;
};

} // namespace heapkit
