// SPDX-License-Identifier: MIT
// What a SIGPROF handler keeps of the thread it interrupted: its registers and a copy of
// the top of its stack, to be unwound later on the profiler's own thread (as perf does
// with --call-graph=dwarf). The handler itself never unwinds: an unwinder reads memory
// that bad unwind information points anywhere (JIT code has none), takes the loader's
// locks, and libunwind's checks write through pipes whose numbers the host may have
// closed and reused. A copy made with process_vm_readv(2) cannot fault and uses no
// descriptor.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <sys/mman.h>

namespace heapkit::runtime {

// x86-64's DWARF register numbers 0..16 (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15,
// and the return-address column, which holds the interrupted pc).
inline constexpr unsigned snapshot_registers = 17;
inline constexpr unsigned dwarf_sp = 7;
inline constexpr unsigned dwarf_pc = 16;
// Enough for the 64 frames a profile keeps of most programs (CPython's deepest C stacks
// take about 12 kB), and what a pool of them costs stays small.
inline constexpr size_t snapshot_stack_bytes = 16 * 1024;

struct StackSnapshot {
    enum : uint32_t { free = 0, writing = 1, ready = 2 };
    std::atomic<uint32_t> state{free};
    uint32_t ticks = 0;                       // timer periods this signal stands for
    uint64_t registers[snapshot_registers]{}; // DWARF numbering, runtime addresses
    uint64_t stack_size = 0;                  // bytes of `stack` copied from the sp up
    unsigned char stack[snapshot_stack_bytes];
};

// A fixed pool of snapshots, mapped (not allocated: jemalloc would sample it) before the
// first signal. The handler claims a free one and publishes it ready; the profiler's
// thread unwinds ready ones and frees them. Lock-free, so a signal can use it anywhere.
class SnapshotPool {
public:
    explicit SnapshotPool(size_t count)
        : m_count(count)
        , m_bytes(count * sizeof(StackSnapshot)) {
        void* memory = mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        m_snapshots = memory == MAP_FAILED ? nullptr : static_cast<StackSnapshot*>(memory);
    }
    ~SnapshotPool() {
        if (m_snapshots != nullptr) {
            munmap(m_snapshots, m_bytes);
        }
    }
    SnapshotPool(const SnapshotPool&) = delete;
    SnapshotPool& operator=(const SnapshotPool&) = delete;

    bool mapped() const { return m_snapshots != nullptr; }
    size_t size() const { return m_count; }
    StackSnapshot& operator[](size_t index) { return m_snapshots[index]; }

    // A free snapshot, now being written; null when every one is in use. The first free
    // one: only as many pages are touched as are in use at once. Async-signal-safe.
    StackSnapshot* claim() {
        for (size_t i = 0; i < m_count; ++i) {
            StackSnapshot& snapshot = m_snapshots[i];
            uint32_t expected = StackSnapshot::free;
            if (snapshot.state.compare_exchange_strong(expected, StackSnapshot::writing,
                                                       std::memory_order_acquire)) {
                return &snapshot;
            }
        }
        return nullptr;
    }

private:
    size_t m_count;
    size_t m_bytes;
    StackSnapshot* m_snapshots = nullptr; // zero-filled by mmap: every state is `free`
};

} // namespace heapkit::runtime
