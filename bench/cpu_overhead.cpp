// SPDX-License-Identifier: MIT
// What a running CPU profile costs a CPU-bound workload: THREADS threads do fixed units of
// arithmetic for SECONDS while the runtime's sampler runs at 0 (none), 100 and 1000 Hz,
// the modes taking turns for ROUNDS rounds. Prints units per second (median) and the loss
// against no profile, then what writing one profile as pprof took afterwards.
//   heapkit-cpu-overhead [THREADS (cores)] [SECONDS (5)] [ROUNDS (3)]
#include "heapkit/runtime/cpu/cpu_export.hpp"
#include "heapkit/runtime/cpu/cpu_sampler.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace heapkit::runtime;

namespace {

std::atomic<bool> g_stop{false};

__attribute__((noinline)) uint64_t work_unit(uint64_t seed) {
    for (int i = 0; i < 100000; ++i) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    }
    return seed;
}

double thread_cpu_seconds() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// Units done, and the thread's CPU time (the signal handler's time is charged to the
// thread it interrupts, so units per CPU second show the sampler's cost even when other
// processes take turns on the CPUs).
void worker(std::atomic<uint64_t>& units, std::atomic<int64_t>& cpu_micros) {
    double start = thread_cpu_seconds();
    uint64_t seed = 1;
    uint64_t done = 0;
    while (!g_stop.load(std::memory_order_relaxed)) {
        seed = work_unit(seed);
        ++done;
    }
    units += done + (seed == 0 ? 1 : 0); // seed used: the loop is not folded away
    cpu_micros += static_cast<int64_t>((thread_cpu_seconds() - start) * 1e6);
}

struct Rates {
    double per_second = 0;     // wall clock
    double per_cpu_second = 0; // the workers' CPU time
};

// Units per second with the sampler at `frequency` Hz (0: not running).
Rates run_once(int threads, int seconds, unsigned frequency, CpuSamples* kept) {
    g_stop = false;
    std::atomic<uint64_t> units{0};
    std::atomic<int64_t> cpu_micros{0};
    std::vector<std::thread> pool;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < threads; ++i) {
        pool.emplace_back(worker, std::ref(units), std::ref(cpu_micros));
    }
    if (frequency == 0) {
        std::this_thread::sleep_for(std::chrono::seconds(seconds));
    } else {
        auto slot = CpuProfileSlot::claim();
        auto samples = slot->record(std::chrono::seconds(seconds), frequency);
        if (samples && kept != nullptr) {
            *kept = std::move(*samples);
        }
    }
    g_stop = true;
    for (std::thread& thread : pool) {
        thread.join();
    }
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto done = static_cast<double>(units.load());
    return {done / elapsed, done / (static_cast<double>(cpu_micros.load()) / 1e6)};
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    int threads = argc > 1 ? std::atoi(argv[1]) : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    int seconds = argc > 2 ? std::atoi(argv[2]) : 5;
    int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
    const unsigned frequencies[] = {0, 100, 1000};
    std::vector<double> rates[3];
    std::vector<double> cpu_rates[3];
    CpuSamples last;
    for (int round = 0; round < rounds; ++round) {
        for (int mode = 0; mode < 3; ++mode) {
            Rates rate = run_once(threads, seconds, frequencies[mode], &last);
            rates[mode].push_back(rate.per_second);
            cpu_rates[mode].push_back(rate.per_cpu_second);
        }
    }
    std::printf("%d threads, %d s a run, median of %d rounds\n", threads, seconds, rounds);
    std::printf("%-10s %14s %10s %16s %10s\n", "profile", "units/s", "loss", "units/CPU-s", "loss");
    double none = median(rates[0]);
    double cpu_none = median(cpu_rates[0]);
    for (int mode = 0; mode < 3; ++mode) {
        double rate = median(rates[mode]);
        double cpu_rate = median(cpu_rates[mode]);
        std::printf("%-10s %14.1f %9.2f%% %16.1f %9.2f%%\n",
                    mode == 0 ? "none" : (mode == 1 ? "100 Hz" : "1000 Hz"), rate,
                    100.0 * (none - rate) / none, cpu_rate,
                    100.0 * (cpu_none - cpu_rate) / cpu_none);
    }
    uint64_t periods = 0;
    for (uint32_t ticks : last.ticks) {
        periods += ticks;
    }
    auto start = std::chrono::steady_clock::now();
    auto pprof = cpu_pprof(last, true);
    double writing =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("last 1000 Hz profile: %zu signals for %llu periods, %llu dropped; "
                "pprof (named in-process) %zu bytes in %.3f s\n",
                last.depths.size(), static_cast<unsigned long long>(periods),
                static_cast<unsigned long long>(last.dropped), pprof ? pprof->size() : 0, writing);
    return 0;
}
