// SPDX-License-Identifier: MIT
// SIGPROF sampling. The handler runs on whichever thread the kernel interrupts, at any
// instruction: it only unwinds (libunwind's local unwinder, from the signal's context)
// into a buffer mapped before the timer starts, claiming a slot with one atomic add. No
// allocation, no lock, no call into jemalloc.
#include "heapkit/runtime/cpu_sampler.hpp"

#define UNW_LOCAL_ONLY
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <libunwind.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

struct Slot {
    std::atomic<uint32_t> depth; // 0 until the stack is complete
    uint32_t ticks;              // 1 + the timer's overruns: periods this signal stands for
    uint64_t pcs[max_cpu_depth];
};

// What the handler sees. Set before the handler is installed, cleared after it is gone.
std::atomic<Slot*> g_slots{nullptr};
std::atomic<size_t> g_capacity{0};
std::atomic<size_t> g_next{0};
std::atomic<uint64_t> g_dropped{0};
std::atomic<int> g_running{0}; // handlers between entry and exit
std::atomic<bool> g_claimed{false};

void record_stack(Slot& slot, const siginfo_t* info, void* context) {
    // A process CPU-time timer is checked at the kernel's tick (often 250 Hz) on each
    // CPU: at a higher frequency one signal covers several periods, counted as overruns.
    slot.ticks = 1 + static_cast<uint32_t>(std::max(0, info->si_overrun));
    unw_cursor_t cursor;
    // The signal's context, not the handler's frame: the stack starts at the interrupted
    // instruction, and UNW_INIT_SIGNAL_FRAME says that pc is not a return address.
    if (unw_init_local2(&cursor, static_cast<unw_context_t*>(context), UNW_INIT_SIGNAL_FRAME) < 0) {
        return;
    }
    uint32_t depth = 0;
    do {
        unw_word_t pc = 0;
        if (unw_get_reg(&cursor, UNW_REG_IP, &pc) < 0 || pc == 0) {
            break;
        }
        slot.pcs[depth++] = pc;
    } while (depth < max_cpu_depth && unw_step(&cursor) > 0);
    slot.depth.store(depth, std::memory_order_release);
}

void on_sigprof(int, siginfo_t* info, void* context) {
    int saved_errno = errno; // the interrupted code may be between a call and its errno check
    g_running.fetch_add(1, std::memory_order_acq_rel);
    Slot* slots = g_slots.load(std::memory_order_acquire);
    if (slots != nullptr) {
        size_t index = g_next.fetch_add(1, std::memory_order_relaxed);
        if (index < g_capacity.load(std::memory_order_relaxed)) {
            record_stack(slots[index], info, context);
        } else {
            g_dropped.fetch_add(1, std::memory_order_relaxed);
        }
    }
    g_running.fetch_sub(1, std::memory_order_acq_rel);
    errno = saved_errno;
}

// The buffer: mapped, not allocated (jemalloc would sample it), and only the slots that
// are written take memory.
class SlotMap {
public:
    explicit SlotMap(size_t capacity)
        : m_bytes(capacity * sizeof(Slot)) {
        void* memory = mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        m_slots = memory == MAP_FAILED ? nullptr : static_cast<Slot*>(memory);
    }
    ~SlotMap() {
        if (m_slots != nullptr) {
            munmap(m_slots, m_bytes);
        }
    }
    SlotMap(const SlotMap&) = delete;
    SlotMap& operator=(const SlotMap&) = delete;
    Slot* slots() const { return m_slots; }

private:
    size_t m_bytes;
    Slot* m_slots = nullptr;
};

// Enough slots for every CPU busy the whole time, with a margin; at most 128k (68 MB of
// address space at 64 frames; touched only as filled).
size_t capacity_for(std::chrono::milliseconds duration, unsigned frequency) {
    long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    double ticks = static_cast<double>(frequency) * static_cast<double>(duration.count()) / 1000.0 *
                   static_cast<double>(cpus);
    return std::clamp(static_cast<size_t>(ticks * 1.25) + 256, size_t{256}, size_t{1} << 17);
}

// libunwind sets itself up (and may allocate) on its first use: do that here, outside
// any signal handler. Per-thread caches need no lock a signal could interrupt.
void warm_up_unwinder() {
    static const bool done = [] {
        unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
        unw_context_t context;
        unw_cursor_t cursor;
        if (unw_getcontext(&context) == 0 && unw_init_local(&cursor, &context) == 0) {
            while (unw_step(&cursor) > 0) {
            }
        }
        return true;
    }();
    static_cast<void>(done);
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

// The handler installed for as long as it lives; the previous disposition put back. A
// handler of the process's own found in place (installed since sigprof_is_free said
// otherwise) is put back at once and this one counts as not installed.
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
        if (m_installed) {
            sigaction(SIGPROF, &m_previous, nullptr);
        }
    }
    SigprofHandler(const SigprofHandler&) = delete;
    SigprofHandler& operator=(const SigprofHandler&) = delete;
    bool installed() const { return m_installed; }

private:
    struct sigaction m_previous {};
    bool m_installed = false;
};

// A process CPU-time timer sending SIGPROF; deleted (its pending signal let through to
// our handler, which is still installed) before the handler goes.
class ProfTimer {
public:
    explicit ProfTimer(unsigned frequency) {
        sigevent event{};
        event.sigev_notify = SIGEV_SIGNAL;
        event.sigev_signo = SIGPROF;
        if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &event, &m_timer) != 0) {
            return;
        }
        m_created = true;
        long interval = 1'000'000'000L / static_cast<long>(frequency);
        itimerspec spec{};
        spec.it_interval.tv_sec = interval / 1'000'000'000L;
        spec.it_interval.tv_nsec = interval % 1'000'000'000L;
        spec.it_value = spec.it_interval;
        m_armed = timer_settime(m_timer, 0, &spec, nullptr) == 0;
    }
    ~ProfTimer() {
        if (m_created) {
            timer_delete(m_timer);
            // A tick already queued is delivered to some thread soon after: give it the
            // time to reach our handler, which ignores it now, rather than the default
            // action (SIGPROF's default terminates the process).
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    ProfTimer(const ProfTimer&) = delete;
    ProfTimer& operator=(const ProfTimer&) = delete;
    bool armed() const { return m_armed; }

private:
    timer_t m_timer{};
    bool m_created = false;
    bool m_armed = false;
};

void collect(const Slot* slots, size_t count, CpuSamples& samples) {
    for (size_t i = 0; i < count; ++i) {
        uint32_t depth = slots[i].depth.load(std::memory_order_acquire);
        if (depth == 0) {
            continue; // the unwinder found no frame
        }
        samples.depths.push_back(depth);
        samples.ticks.push_back(slots[i].ticks);
        samples.pcs.insert(samples.pcs.end(), slots[i].pcs, slots[i].pcs + depth);
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
    warm_up_unwinder();
    size_t capacity = capacity_for(duration, frequency);
    SlotMap map(capacity);
    if (map.slots() == nullptr) {
        return fail("CPU profile: cannot map {} sample slots", capacity);
    }
    g_next.store(0);
    g_dropped.store(0);
    g_capacity.store(capacity);
    g_slots.store(map.slots(), std::memory_order_release);
    CpuSamples samples;
    samples.frequency = frequency;
    samples.start_nanos = wall_nanos();
    {
        SigprofHandler handler;
        if (!handler.installed()) {
            g_slots.store(nullptr);
            return fail("CPU profile: cannot install the SIGPROF handler (the process has "
                        "one of its own?)");
        }
        ProfTimer timer(frequency);
        if (!timer.armed()) {
            g_slots.store(nullptr);
            return fail("CPU profile: cannot start a CPU-time timer");
        }
        if (wait) {
            wait(duration);
        } else {
            std::this_thread::sleep_for(duration);
        }
        g_slots.store(nullptr, std::memory_order_release);
    } // timer deleted, then the handler: the previous disposition is back
    while (g_running.load(std::memory_order_acquire) != 0) {
        std::this_thread::yield();
    }
    samples.duration_nanos = wall_nanos() - samples.start_nanos;
    collect(map.slots(), std::min(g_next.load(), capacity), samples);
    samples.dropped = g_dropped.load();
    return samples;
}

} // namespace heapkit::runtime
