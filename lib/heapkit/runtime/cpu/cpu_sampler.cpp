// SPDX-License-Identifier: MIT
// SIGPROF sampling. Each thread of the program has a timer on its own CPU clock
// (thread_timers), so a signal interrupts only a thread that is running. The handler runs
// at any instruction of it: it copies the registers and the top of the stack into a
// snapshot mapped before the first timer starts (stack_snapshot), and returns. No
// unwinding, no allocation, no lock, no descriptor, no call into jemalloc. The profiler's
// thread unwinds the snapshots as they come (snapshot_unwinder).
#include "heapkit/runtime/cpu/cpu_sampler.hpp"

#include "heapkit/runtime/cpu/snapshot_unwinder.hpp"
#include "heapkit/runtime/cpu/stack_snapshot.hpp"
#include "heapkit/runtime/cpu/thread_timers.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <sys/uio.h>
#include <thread>
#include <ucontext.h>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

// What the handler sees. Set before the handler is installed, cleared before it goes.
std::atomic<SnapshotPool*> g_pool{nullptr};
std::atomic<pid_t> g_pid{0};
std::atomic<uint64_t> g_dropped{0};
std::atomic<int> g_running{0}; // handlers between entry and exit
std::atomic<bool> g_claimed{false};

// The interrupted thread's registers, in DWARF's x86-64 numbering.
void copy_registers(const ucontext_t& context, uint64_t (&registers)[snapshot_registers]) {
    const greg_t* gregs = context.uc_mcontext.gregs;
    constexpr int order[snapshot_registers] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
                                               REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
                                               REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};
    for (unsigned i = 0; i < snapshot_registers; ++i) {
        registers[i] = static_cast<uint64_t>(gregs[order[i]]);
    }
}

// Copies the stack from the sp up, a page per iovec: process_vm_readv(2) stops at the
// first page it cannot read (the stack's end) instead of faulting, and keeps the pages
// before it.
uint64_t copy_stack(uint64_t sp, unsigned char* into) {
    constexpr size_t page = 4096;
    constexpr size_t pieces = snapshot_stack_bytes / page + 1;
    iovec local{into, snapshot_stack_bytes};
    iovec remote[pieces];
    size_t count = 0;
    size_t left = snapshot_stack_bytes;
    uint64_t at = sp;
    while (left > 0 && count < pieces) {
        size_t size = std::min(left, page - static_cast<size_t>(at % page));
        remote[count++] = iovec{reinterpret_cast<void*>(at), size};
        at += size;
        left -= size;
    }
    ssize_t copied =
        process_vm_readv(g_pid.load(std::memory_order_relaxed), &local, 1, remote, count, 0);
    return copied > 0 ? static_cast<uint64_t>(copied) : 0;
}

void on_sigprof(int, siginfo_t* info, void* context) {
    int saved_errno = errno; // the interrupted code may be between a call and its errno check
    g_running.fetch_add(1, std::memory_order_acq_rel);
    SnapshotPool* pool = g_pool.load(std::memory_order_acquire);
    if (pool != nullptr) {
        // One signal covers several periods when the timer ran past them before the
        // kernel's tick checked it: counted as overruns.
        uint32_t ticks = 1 + static_cast<uint32_t>(std::max(0, info->si_overrun));
        if (StackSnapshot* snapshot = pool->claim()) {
            snapshot->ticks = ticks;
            copy_registers(*static_cast<const ucontext_t*>(context), snapshot->registers);
            snapshot->stack_size = copy_stack(snapshot->registers[dwarf_sp], snapshot->stack);
            snapshot->state.store(StackSnapshot::ready, std::memory_order_release);
        } else {
            g_dropped.fetch_add(ticks, std::memory_order_relaxed);
        }
    }
    g_running.fetch_sub(1, std::memory_order_acq_rel);
    errno = saved_errno;
}

// Enough snapshots for every CPU busy between two of the profiler's 10 ms turns, with a
// margin for turns that come late (the profiler's thread competes with the busy ones);
// at 100 Hz on a few CPUs, 64 (1 MB). The handler claims the first free one.
size_t pool_size_for(unsigned frequency) {
    long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    size_t per_turn = static_cast<size_t>(frequency) * static_cast<size_t>(cpus) / 100;
    return std::clamp(per_turn * 8, size_t{64}, size_t{2048});
}

int64_t wall_nanos() {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

bool is_handler(const struct sigaction& action) {
    return (action.sa_flags & SA_SIGINFO) != 0 ||
           (action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN);
}

bool is_ours(const struct sigaction& action) {
    return (action.sa_flags & SA_SIGINFO) != 0 && action.sa_sigaction == on_sigprof;
}

// True while some thread still has a SIGPROF of ours pending (a thread that blocks
// signals for a while gets it when it unblocks them).
bool sigprof_pending() {
    sigset_t pending;
    sigemptyset(&pending);
    return sigpending(&pending) == 0 && sigismember(&pending, SIGPROF) == 1;
}

// The handler installed for as long as it lives. The previous disposition is put back
// only while the handler is still ours: a program that installed its own since keeps it.
// A handler of the program's own found in place is put back at once, and this one counts
// as not installed.
class SigprofHandler {
public:
    SigprofHandler() {
        struct sigaction action {};
        action.sa_sigaction = on_sigprof;
        action.sa_flags = SA_SIGINFO | SA_RESTART; // interrupted system calls go on
        sigemptyset(&action.sa_mask);
        m_installed = sigaction(SIGPROF, &action, &m_previous) == 0;
        if (m_installed && is_handler(m_previous)) {
            sigaction(SIGPROF, &m_previous, nullptr);
            m_installed = false;
        }
    }
    ~SigprofHandler() {
        if (!m_installed || !still_ours()) {
            return;
        }
        // A signal of ours still queued would meet SIGPROF's default action (the end of
        // the process): our handler, which ignores it now, stays until none is left, and
        // for good if one stays pending (its thread blocks signals).
        for (int i = 0; i < 50 && sigprof_pending(); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        if (!sigprof_pending()) {
            sigaction(SIGPROF, &m_previous, nullptr);
        }
    }
    SigprofHandler(const SigprofHandler&) = delete;
    SigprofHandler& operator=(const SigprofHandler&) = delete;
    bool installed() const { return m_installed; }
    bool still_ours() const {
        struct sigaction current {};
        return sigaction(SIGPROF, nullptr, &current) == 0 && is_ours(current);
    }

private:
    struct sigaction m_previous {};
    bool m_installed = false;
};

// SIGPROF blocked in the calling thread while it lives: the profiler's own work is not
// the program's, and its timer is never armed (ThreadTimers skips threads that block it).
class SigprofBlocked {
public:
    SigprofBlocked() {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGPROF);
        pthread_sigmask(SIG_BLOCK, &set, &m_previous);
    }
    ~SigprofBlocked() { pthread_sigmask(SIG_SETMASK, &m_previous, nullptr); }
    SigprofBlocked(const SigprofBlocked&) = delete;
    SigprofBlocked& operator=(const SigprofBlocked&) = delete;

private:
    sigset_t m_previous;
};

// Unwinds every ready snapshot into `samples` and frees it for the handler.
void drain(SnapshotPool& pool, SnapshotUnwinder& unwinder, CpuSamples& samples) {
    for (size_t i = 0; i < pool.size(); ++i) {
        StackSnapshot& snapshot = pool[i];
        if (snapshot.state.load(std::memory_order_acquire) != StackSnapshot::ready) {
            continue;
        }
        uint32_t depth = unwinder.unwind(snapshot, samples.pcs, max_cpu_depth);
        if (depth > 0) {
            samples.depths.push_back(depth);
            samples.ticks.push_back(snapshot.ticks);
        }
        snapshot.state.store(StackSnapshot::free, std::memory_order_release);
    }
}

} // namespace

Result<void> sigprof_is_free() {
    struct sigaction current {};
    if (sigaction(SIGPROF, nullptr, &current) != 0) {
        return fail("CPU profile: cannot read the SIGPROF disposition");
    }
    if (is_handler(current)) {
        return fail("this process has a SIGPROF handler of its own: a CPU profile would take "
                    "its signals, so none is taken");
    }
    return {};
}

std::unique_ptr<CpuProfileSlot> CpuProfileSlot::claim() {
    bool expected = false;
    if (!g_claimed.compare_exchange_strong(expected, true)) {
        return nullptr;
    }
    return std::unique_ptr<CpuProfileSlot>(new CpuProfileSlot());
}

CpuProfileSlot::~CpuProfileSlot() {
    g_claimed.store(false);
}

Result<CpuSamples>
CpuProfileSlot::record(std::chrono::milliseconds duration, unsigned frequency,
                       const std::function<void(std::chrono::milliseconds)>& wait) {
    if (frequency == 0 || frequency > max_cpu_frequency) {
        return fail("CPU profile frequency {} Hz: expected 1 to {}", frequency, max_cpu_frequency);
    }
    SigprofBlocked blocked;
    SnapshotPool pool(pool_size_for(frequency));
    if (!pool.mapped()) {
        return fail("CPU profile: cannot map {} stack snapshots", pool.size());
    }
    g_pid.store(getpid());
    g_dropped.store(0);
    g_pool.store(&pool, std::memory_order_release);
    CpuSamples samples;
    samples.frequency = frequency;
    samples.start_nanos = wall_nanos();
    std::unique_ptr<SnapshotUnwinder> unwinder;
    {
        SigprofHandler handler;
        if (!handler.installed()) {
            g_pool.store(nullptr);
            return fail("CPU profile: cannot install the SIGPROF handler (the process has "
                        "one of its own?)");
        }
        ThreadTimers timers(frequency);
        timers.arm_new_threads();
        // Made once the timers run: what the profiler's thread does before they do is CPU
        // time of the program's that no sample stands for (much of it, when the program's
        // threads keep every CPU busy and the profiler's thread waits for one).
        unwinder = SnapshotUnwinder::for_this_process();
        if (!unwinder) {
            g_pool.store(nullptr);
            return fail("CPU profile: cannot read this process's modules to unwind its "
                        "stacks");
        }
        // Turns of 10 ms: unwind what came, arm threads started since (every turn for the
        // first 100 ms, then every 100 ms), and
        // end early when asked to (`wait` returns at once) or when the program has
        // installed a SIGPROF handler of its own (its signals are its own again).
        constexpr auto turn = std::chrono::milliseconds(10);
        auto start = std::chrono::steady_clock::now();
        for (unsigned turns = 1;; ++turns) {
            auto left = duration - std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::steady_clock::now() - start);
            if (left <= std::chrono::milliseconds(0)) {
                break;
            }
            auto slice = std::min<std::chrono::milliseconds>(turn, left);
            auto before = std::chrono::steady_clock::now();
            if (wait) {
                wait(slice);
            } else {
                std::this_thread::sleep_for(slice);
            }
            drain(pool, *unwinder, samples);
            if (std::chrono::steady_clock::now() - before < slice / 2 || !handler.still_ours()) {
                break;
            }
            if (turns < 10 || turns % 10 == 0) { // threads just started block signals a moment
                timers.arm_new_threads();
            }
        }
        timers.disarm();
        std::this_thread::sleep_for(std::chrono::milliseconds(5)); // signals under way land
        g_pool.store(nullptr, std::memory_order_release);
    } // the handler goes, and the previous disposition is back if it is still ours
    while (g_running.load(std::memory_order_acquire) != 0) {
        std::this_thread::yield();
    }
    drain(pool, *unwinder, samples);
    samples.duration_nanos = wall_nanos() - samples.start_nanos;
    samples.dropped = g_dropped.load();
    return samples;
}

} // namespace heapkit::runtime
