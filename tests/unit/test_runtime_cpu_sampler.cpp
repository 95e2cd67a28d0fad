// SPDX-License-Identifier: MIT
// The SIGPROF sampler in a process of 16 busy threads at the highest frequency: what CI's
// sanitizer builds run (the jemalloc example service cannot run under ASan).
#include "heapkit/runtime/cpu/cpu_export.hpp"
#include "heapkit/runtime/cpu/cpu_sampler.hpp"
#include "heapkit/runtime/handler.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <doctest/doctest.h>
#include <thread>
#include <vector>

using namespace heapkit;
using namespace heapkit::runtime;

namespace {

std::atomic<bool> g_stop{false};

__attribute__((noinline)) void spin_for_the_sampler_test() {
    volatile uint64_t sink = 0;
    while (!g_stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 1000; ++i) {
            sink = sink * 31 + static_cast<uint64_t>(i);
        }
    }
}

void ignore_sigprof(int) {}

// 16 busy threads for as long as it lives.
class BusyThreads {
public:
    explicit BusyThreads(int count) {
        g_stop = false;
        for (int i = 0; i < count; ++i) {
            m_threads.emplace_back(spin_for_the_sampler_test);
        }
    }
    ~BusyThreads() {
        g_stop = true;
        for (std::thread& thread : m_threads) {
            thread.join();
        }
    }
    // The CPU time the busy threads have used, in ms: what a profile of them should count
    // (the process's own clock also counts the profiler's work, which it does not sample).
    double cpu_ms() {
        double total = 0;
        for (std::thread& thread : m_threads) {
            clockid_t clock{};
            timespec used{};
            if (pthread_getcpuclockid(thread.native_handle(), &clock) == 0 &&
                clock_gettime(clock, &used) == 0) {
                total += static_cast<double>(used.tv_sec) * 1e3 +
                         static_cast<double>(used.tv_nsec) / 1e6;
            }
        }
        return total;
    }

private:
    std::vector<std::thread> m_threads;
};

} // namespace

TEST_CASE("heapkit::runtime::CpuProfileSlot samples 16 busy threads at 1000 Hz") {
    // A disposition of the program's own, to be found again afterwards: ignored (a
    // handler of its own would keep the profiler off, see below).
    struct sigaction mine {};
    mine.sa_handler = SIG_IGN;
    sigemptyset(&mine.sa_mask);
    struct sigaction before {};
    REQUIRE(sigaction(SIGPROF, &mine, &before) == 0);

    BusyThreads busy(16);
    auto slot = CpuProfileSlot::claim();
    REQUIRE(slot != nullptr);
    CHECK(CpuProfileSlot::claim() == nullptr); // one profile at a time
    double cpu_before = busy.cpu_ms();
    auto samples = slot->record(std::chrono::milliseconds(2000), max_cpu_frequency);
    REQUIRE_MESSAGE(samples.has_value(), (samples ? "" : samples.error().message));
    double cpu_ms = busy.cpu_ms() - cpu_before;
    // One period per CPU millisecond the busy threads used, though the kernel's tick may
    // deliver fewer signals, each counting its overruns (a signal stands for 4 periods at
    // a 250 Hz tick). The CPU time is the threads' own (not "a CPU for most of the
    // second"): the suite and other builds share the cores. Some is not sampled: each
    // thread's last partial period, and what the threads run while the profiler's thread,
    // one among 17 on the cores, arms and disarms their timers: on a loaded machine (the
    // suite beside five builds) that took 45 % of the threads' CPU time, so the bound only
    // says that every thread is timed on its own clock (one process-wide timer, or
    // threads left unarmed, would give a small fraction of it).
    uint64_t periods = 0;
    for (uint32_t ticks : samples->ticks) {
        periods += ticks;
    }
    CHECK(samples->ticks.size() == samples->depths.size());
    CHECK(samples->depths.size() > 50);
    CHECK(static_cast<double>(periods + samples->dropped) > 0.4 * cpu_ms);
    CHECK(samples->period_nanos() == 1'000'000);
    CHECK(samples->duration_nanos >= 2'000'000'000);

    Profile profile = cpu_profile(*samples, true);
    int64_t ticks = 0;
    int64_t spinning = 0;
    for (const Sample& sample : profile.samples) {
        ticks += sample.values.inuse_objects;
        CHECK(sample.values.inuse_space == sample.values.inuse_objects * 1'000'000);
        for (uint32_t id : profile.locations_of(sample)) {
            const Location& location = profile.locations[id];
            if (!location.frames.empty() &&
                location.frames.back().name.find("spin_for_the_sampler_test") !=
                    std::string_view::npos) {
                spinning += sample.values.inuse_objects;
                break;
            }
        }
    }
    CHECK(ticks == static_cast<int64_t>(periods));
    CHECK(spinning * 2 > ticks); // the busy function carries most of the samples

    struct sigaction after {};
    REQUIRE(sigaction(SIGPROF, nullptr, &after) == 0);
    CHECK((after.sa_handler == SIG_IGN)); // the previous disposition is back
    sigaction(SIGPROF, &before, nullptr);
    slot.reset();
    CHECK(CpuProfileSlot::claim() != nullptr);
}

TEST_CASE("heapkit::runtime::CpuProfileSlot rejects frequencies outside 1 to 1000 Hz") {
    auto slot = CpuProfileSlot::claim();
    REQUIRE(slot != nullptr);
    CHECK_FALSE(slot->record(std::chrono::milliseconds(10), 0).has_value());
    auto too_fast = slot->record(std::chrono::milliseconds(10), 1001);
    REQUIRE_FALSE(too_fast.has_value());
    CHECK(too_fast.error().message.find("1001 Hz") != std::string::npos);
}

TEST_CASE("heapkit::runtime::cpu_gperftools writes the header, records, trailer and maps") {
    CpuSamples samples;
    samples.frequency = 100;
    samples.pcs = {0x1000, 0x2000, 0x1000, 0x2000, 0x3000};
    samples.depths = {2, 2, 1};
    std::string bytes = cpu_gperftools(samples);
    std::vector<uint64_t> words((bytes.size()) / 8);
    std::memcpy(words.data(), bytes.data(), words.size() * 8);
    REQUIRE(words.size() > 14);
    CHECK(std::vector<uint64_t>(words.begin(), words.begin() + 5) ==
          std::vector<uint64_t>{0, 3, 0, 10000, 0});
    // Identical stacks counted once, sorted: (2 x 0x1000 0x2000), (1 x 0x3000).
    CHECK(std::vector<uint64_t>(words.begin() + 5, words.begin() + 15) ==
          std::vector<uint64_t>{2, 2, 0x1000, 0x2000, 1, 1, 0x3000, 0, 1, 0});
    CHECK(bytes.find("r-xp") != std::string::npos); // /proc/self/maps follows
}

TEST_CASE("heapkit::runtime::Handler's CPU pages: bounds, 409 while busy, a profile") {
    Handler handler;
    auto get = [&](const std::string& path, const std::string& query) {
        return handler.handle(Request{"GET", path, query, {}, "", {}, {}, {}});
    };
    for (const char* query : {"seconds=0", "seconds=301", "seconds=1x", "frequency=0",
                              "frequency=1001", "debug=1", "width=10", "colour=red"}) {
        for (const char* path : {"/debug/pprof/profile", "/pprof/profile", "/pprof/profile/report",
                                 "/pprof/profile/flamegraph"}) {
            Response response = get(path, query);
            CHECK_MESSAGE(response.status == 400, path, "?", query);
            CHECK(!response.body.empty());
        }
    }
    {
        auto busy = CpuProfileSlot::claim();
        REQUIRE(busy != nullptr);
        Response refused = get("/debug/pprof/profile", "seconds=1");
        CHECK(refused.status == 409);
        CHECK(refused.body.find("already") != std::string::npos);
    }
    BusyThreads busy(2);
    Response pprof = get("/debug/pprof/profile", "seconds=1&frequency=200");
    CHECK(pprof.status == 200);
    CHECK(pprof.body.substr(0, 2) == "\x1f\x8b");
    Response gperftools = get("/pprof/profile", "seconds=1");
    REQUIRE(gperftools.status == 200);
    uint64_t header[5] = {};
    REQUIRE(gperftools.body.size() > sizeof header);
    std::memcpy(header, gperftools.body.data(), sizeof header);
    CHECK(header[1] == 3);
    CHECK(header[3] == 10000); // 100 Hz: 10,000 us
    Response svg = get("/pprof/profile/flamegraph", "seconds=1&width=640");
    CHECK(svg.status == 200);
    CHECK(svg.content_type == "image/svg+xml");
    CHECK(svg.body.find("width=\"640\"") != std::string::npos);
    CHECK(svg.body.find("spin_for_the_sampler_test") != std::string::npos);
}

TEST_CASE("heapkit::runtime CPU profiles keep off a SIGPROF handler the process installed") {
    CHECK(sigprof_is_free());
    struct sigaction own {};
    own.sa_handler = ignore_sigprof;
    struct sigaction previous {};
    REQUIRE(sigaction(SIGPROF, &own, &previous) == 0);
    CHECK(!sigprof_is_free());
    Response refused =
        Handler().handle(Request{"GET", "/debug/pprof/profile", "seconds=1", {}, "", {}, {}, {}});
    CHECK(refused.status == 409);
    CHECK(refused.body.find("SIGPROF handler of its own") != std::string::npos);
    // Also when it appears between the check and the profile: record() puts it back.
    auto slot = CpuProfileSlot::claim();
    REQUIRE(slot != nullptr);
    CHECK(!slot->record(std::chrono::milliseconds(50), 100));
    struct sigaction after {};
    sigaction(SIGPROF, nullptr, &after);
    bool still_own = after.sa_handler == ignore_sigprof;
    CHECK(still_own);
    sigaction(SIGPROF, &previous, nullptr);
}

TEST_CASE("heapkit::runtime::Handler refuses CPU profiles when they are not allowed") {
    HandlerOptions options;
    options.allow_cpu_profiles = false;
    for (const char* path : {"/debug/pprof/profile", "/pprof/profile", "/pprof/profile/report",
                             "/pprof/profile/flamegraph"}) {
        Response response =
            Handler(options).handle(Request{"GET", path, "seconds=1", {}, "", {}, {}, {}});
        CHECK_MESSAGE(response.status == 403, path);
    }
}

TEST_CASE("heapkit::runtime::Handler's windowed pages answer 503 when the server stops") {
    Request request{"GET", "/debug/pprof/profile", "seconds=1", {}, "",
                    {},    [] { return true; },    {}};
    CHECK(Handler().handle(request).status == 503);
}

TEST_CASE("heapkit::runtime CPU profiles end, and keep the handler, when the program installs "
          "its own during one") {
    BusyThreads busy(2);
    auto slot = CpuProfileSlot::claim();
    REQUIRE(slot != nullptr);
    std::thread program([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        struct sigaction own {};
        own.sa_handler = ignore_sigprof;
        sigemptyset(&own.sa_mask);
        sigaction(SIGPROF, &own, nullptr);
    });
    auto started = std::chrono::steady_clock::now();
    auto samples = slot->record(std::chrono::milliseconds(3000), 100);
    auto took = std::chrono::steady_clock::now() - started;
    program.join();
    REQUIRE(samples.has_value());
    CHECK(took < std::chrono::milliseconds(2000)); // it ended at the program's handler
    struct sigaction after {};
    sigaction(SIGPROF, nullptr, &after);
    bool still_own = after.sa_handler == ignore_sigprof;
    CHECK(still_own); // not replaced by the disposition from before the profile
    struct sigaction restore {};
    restore.sa_handler = SIG_DFL;
    sigaction(SIGPROF, &restore, nullptr);
}

TEST_CASE("heapkit::runtime CPU profiles signal no sleeping thread") {
    std::atomic<long> interrupted{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> sleepers;
    for (int i = 0; i < 4; ++i) {
        sleepers.emplace_back([&] {
            while (!stop) {
                timespec millisecond{0, 1'000'000};
                if (nanosleep(&millisecond, nullptr) != 0 && errno == EINTR) {
                    ++interrupted;
                }
            }
        });
    }
    BusyThreads busy(1);
    auto slot = CpuProfileSlot::claim();
    REQUIRE(slot != nullptr);
    auto samples = slot->record(std::chrono::milliseconds(1000), 1000);
    stop = true;
    for (std::thread& sleeper : sleepers) {
        sleeper.join();
    }
    REQUIRE(samples.has_value());
    CHECK(samples->depths.size() > 20);
    CHECK(interrupted.load() == 0);
}
