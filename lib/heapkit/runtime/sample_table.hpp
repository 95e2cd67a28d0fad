// SPDX-License-Identifier: MIT
// The fragmentation sampler's table and its hot path, shared by the two ways allocations
// reach it (fragmentation_sampler.hpp): jemalloc's hooks (the runtime's, and the agent's
// where it cannot interpose) and libheapkit-fragmentation.so's malloc interposers
// (agent/interposers.cpp). Called in the middle of the host's malloc and free, on any
// thread: nothing here allocates through malloc, takes a lock, or waits, and it needs the
// C library alone (the interposers' object has no C++ library). sample_table.cpp states
// the table's layout and size.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace heapkit::runtime::sampling {

inline constexpr unsigned max_depth = 30; // frames kept of a sampled allocation's stack
inline constexpr size_t ways = 8;
inline constexpr size_t bucket_count = 8192;
inline constexpr size_t slot_count = ways * bucket_count;
inline constexpr size_t stack_count = 2048;
inline constexpr uint32_t no_stack = UINT32_MAX;
inline constexpr uintptr_t empty = 0;
inline constexpr uintptr_t claimed = 1; // a thread is writing the slot's size and stack

struct alignas(64) Bucket {
    std::atomic<uintptr_t> addresses[ways];
};

struct Stack {
    std::atomic<uint64_t> key; // 0: empty, 1: being written, else the frames' hash
    uint32_t depth;
    uint64_t frames[max_depth];
};

struct Tables {
    // Each bucket's kept objects: a free whose bucket holds none (nearly every free) reads
    // one byte of these 8 KiB, which stay in cache, instead of a line of the 512 KiB of
    // buckets, which would mostly miss.
    std::atomic<uint8_t> counts[bucket_count];
    Bucket buckets[bucket_count];
    std::atomic<uint64_t> sizes[slot_count];
    std::atomic<uint32_t> stacks_of[slot_count];
    Stack stacks[stack_count];
};

using Backtrace = void (*)(void**, unsigned*, unsigned); // jemalloc's prof_backtrace hook
using MallctlCall = int (*)(const char*, void*, size_t*, void*, size_t);

// One sampler: whoever feeds it owns it (a static of its object); the page reads it.
// Shared between two objects of one build (the agent's core and the interposers), which
// check `abi` first.
struct SamplerState {
    std::atomic<Tables*> tables{nullptr}; // set last, once: null while not sampling
    double mean_bytes = 0;                // between samples
    Backtrace backtrace = nullptr;
    MallctlCall mallctl = nullptr; // of the copy sampled: thread.prof.active
    bool prof = false;             // opt.prof: thread.prof.active says whether a thread is
                                   // sampled (heapkit's own threads are not)
    std::atomic<uint64_t> dropped{0};
};

// Changes whenever SamplerState or Tables do.
inline constexpr uint32_t sampler_abi = 0x48000000u ^
                                        static_cast<uint32_t>(sizeof(SamplerState) << 16) ^
                                        static_cast<uint32_t>(sizeof(Tables) >> 4);

// What libheapkit-fragmentation.so exports (interposer_entry): its sampler, to be started
// by the agent's core, and how to tell that its interposers are the ones called.
struct InterposerInfo {
    SamplerState* state;
    const void* next_malloc; // the malloc its `malloc` forwards to (the next definition)
    const void* code;        // an address in its object, whose frames are the sampler's own
};
// extern "C" const InterposerInfo* heapkit_fragmentation_interposer(uint32_t abi): null
// when `abi` is not its own.
inline constexpr const char* interposer_entry = "heapkit_fragmentation_interposer";
using InterposerEntry = const InterposerInfo* (*)(uint32_t abi);

// Per thread. Initial-exec: a dynamic TLS block would be allocated through malloc on the
// thread's first call. All zero in a new thread, whose first allocation then seeds it.
struct ThreadState {
    uint64_t random;
    int64_t countdown; // bytes left before the next sample
    bool inside;       // in sample_slow: what the unwinder allocates is not sampled
};
extern __thread ThreadState t_sampler_thread
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

// The countdown ran out (or the thread is new): seeds it, or keeps `address` and draws
// the next countdown.
void sample_slow(SamplerState& state, ThreadState& thread, uintptr_t address, uint64_t size);
// `address` is in bucket `index`, which holds some: takes it out if it is there.
void drop_slow(Tables& tables, size_t index, uintptr_t address);

inline size_t bucket_of(uintptr_t address) {
    return ((address >> 4) * 0x9E3779B97F4A7C15ULL) >> 51; // 13 bits
}

// An allocation of `size` bytes returned `result`: counts it down, keeps it one time in
// mean_bytes / size on average.
inline void note_allocation(SamplerState& state, void* result, uint64_t size) {
    if (state.tables.load(std::memory_order_acquire) == nullptr || result == nullptr) {
        return;
    }
    ThreadState& thread = t_sampler_thread;
    thread.countdown -= static_cast<int64_t>(size);
    if (thread.countdown <= 0) {
        sample_slow(state, thread, reinterpret_cast<uintptr_t>(result), size);
    }
}

// `pointer` is about to be freed (or moved): its sample, if it has one, goes. Before the
// free, so that no other thread can have been given the address again meanwhile.
inline void note_free(SamplerState& state, void* pointer) {
    Tables* tables = state.tables.load(std::memory_order_acquire);
    auto address = reinterpret_cast<uintptr_t>(pointer);
    if (tables == nullptr || address <= claimed) {
        return;
    }
    size_t index = bucket_of(address);
    if (tables->counts[index].load(std::memory_order_acquire) != 0) {
        drop_slow(*tables, index, address);
    }
}

} // namespace heapkit::runtime::sampling
