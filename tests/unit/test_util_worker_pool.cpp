// SPDX-License-Identifier: MIT
#include "heapkit/util/worker_pool.hpp"

#include <atomic>
#include <chrono>
#include <doctest/doctest.h>
#include <future>

using namespace heapkit;

namespace {

// A pool of up to four threads that counts the threads it starts.
struct CountingPool {
    std::atomic<int> started = 0;
    WorkerPool pool{4, [this](std::function<void()> work) {
                        ++started;
                        return std::thread(std::move(work));
                    }};
};

} // namespace

TEST_CASE("a job posted while the only thread hands the last one over waits for that thread") {
    // As a client that asks again as soon as it has its answer: the second job comes while
    // the first's hand-over is still running (here: until the second job has been posted).
    CountingPool counting;
    std::promise<void> handed, posted;
    std::future<void> second_posted = posted.get_future();
    REQUIRE(counting.pool.post([&]() -> WorkerPool::HandOver {
        return [&] {
            handed.set_value();
            second_posted.wait();
        };
    }));
    handed.get_future().wait();
    std::promise<void> second_ran;
    REQUIRE(counting.pool.post([&]() -> WorkerPool::HandOver {
        second_ran.set_value();
        return {};
    }));
    posted.set_value();
    CHECK(second_ran.get_future().wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    CHECK(counting.started == 1);
}

TEST_CASE("jobs that wait on each other get threads of their own, up to the pool's number") {
    CountingPool counting;
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::atomic<int> running = 0;
    for (int job = 0; job < 3; ++job) {
        REQUIRE(counting.pool.post([&]() -> WorkerPool::HandOver {
            ++running;
            released.wait();
            return {};
        }));
    }
    for (int tries = 0; running < 3 && tries < 1000; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(running == 3);
    CHECK(counting.started == 3);
    release.set_value();
    counting.pool.stop();
}

TEST_CASE("no job is taken once the pool stops") {
    CountingPool counting;
    counting.pool.stop();
    CHECK_FALSE(counting.pool.post([]() -> WorkerPool::HandOver { return {}; }));
}
