// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace heapkit::runtime {

// What one CPU profile of this process recorded: SIGPROF signals, each the stack of the
// thread that was on CPU (leaf first: the interrupted pc, then return addresses) and the
// timer periods it stands for.
struct CpuSamples {
    unsigned frequency = 0;  // ticks per CPU second asked for
    int64_t start_nanos = 0; // wall clock, ns since the Unix epoch
    int64_t duration_nanos = 0;
    std::vector<uint64_t> pcs;    // stack after stack
    std::vector<uint32_t> depths; // frames of each stack, in order
    std::vector<uint32_t> ticks;  // timer periods each stack stands for (1 + overruns)
    uint64_t dropped = 0;         // ticks that found the buffer full: not in `pcs`

    int64_t period_nanos() const { return 1'000'000'000 / frequency; }
};

inline constexpr unsigned max_cpu_frequency = 1000;
inline constexpr size_t max_cpu_depth = 64; // deeper stacks keep their leafmost frames

// Ok when SIGPROF is free to take: its disposition is the default or ignored. An error
// when the process installed a handler of its own (a profiler of its own, a timer): a
// CPU profile would take its signals, so none is taken.
Result<void> sigprof_is_free();

// The right to profile: one CPU profile at a time per process (a signal handler and a
// timer are process-wide). Held for the profile's duration.
class CpuProfileSlot {
public:
    // Null while another profile is being taken.
    static std::unique_ptr<CpuProfileSlot> claim();
    ~CpuProfileSlot();
    CpuProfileSlot(const CpuProfileSlot&) = delete;
    CpuProfileSlot& operator=(const CpuProfileSlot&) = delete;

    // Samples every thread's CPU time for `duration` at `frequency` Hz (1..1000), then
    // puts back the SIGPROF disposition that was there before. Blocks the calling thread.
    // `wait` waits out `duration` (it may return early: the profile then covers what
    // passed); unset, the thread sleeps.
    Result<CpuSamples> record(std::chrono::milliseconds duration, unsigned frequency,
                              const std::function<void(std::chrono::milliseconds)>& wait = {});

private:
    CpuProfileSlot() = default;
};

} // namespace heapkit::runtime
