// SPDX-License-Identifier: MIT
// The fragmentation sampler's table (sample_table.hpp), in one private anonymous mapping
// that its owner makes before anything feeds it and never frees (a call may still be
// inside after the last look):
//   live objects  8192 buckets of 8 addresses (64 B, one cache line), with a count of
//                 each bucket's objects (a free reads that byte, and the bucket's line
//                 only when it is not 0), the object's size and stack index beside, by
//                 the same slot: 65536 objects, 20 B each, 1.26 MiB with the counts
//   stacks        2048 distinct stacks of up to 30 frames, 256 B each, 512 KiB; insert
//                 only: a stack is written once and then only read
// 1.76 MiB in all, whatever the number of sampled objects; an object whose bucket (or
// whose new stack's probe run) is full is not kept, and counted (`dropped`). With the
// default mean of 512 KiB between samples, 65536 slots stand for 32 GiB of small objects;
// a bucket overflows once the live samples near a quarter of the slots (Poisson: 8 of 8).
//
// Which allocations: a per-thread countdown of bytes, drawn from an exponential
// distribution of the configured mean, as jemalloc's lg_prof_sample draws its own: an
// allocation of s bytes is kept with probability 1 - exp(-s / mean), independently of the
// others, which is what unsampling divides by. Only kept ones are unwound, with the
// unwinder jemalloc's own samples use (experimental.hooks.prof_backtrace: the agent's
// guarded one where the agent put it). Threads whose jemalloc sampling is off (heapkit's
// own server threads) are not sampled.
#include "heapkit/runtime/sample_table.hpp"

#include <cmath>
#include <cstring>
#include <ctime>

namespace heapkit::runtime::sampling {

__thread ThreadState t_sampler_thread __attribute__((tls_model("initial-exec")));

namespace {

constexpr unsigned stack_probes = 64;

uint64_t next_random(ThreadState& thread) { // xorshift64*
    thread.random ^= thread.random >> 12;
    thread.random ^= thread.random << 25;
    thread.random ^= thread.random >> 27;
    return thread.random * 0x2545F4914F6CDD1DULL;
}

int64_t draw_countdown(ThreadState& thread, double mean_bytes) {
    double uniform = static_cast<double>((next_random(thread) >> 11) + 1) * 0x1.0p-53;
    return static_cast<int64_t>(-std::log(uniform) * mean_bytes);
}

void seed(ThreadState& thread) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    thread.random = (reinterpret_cast<uintptr_t>(&thread) * 0x9E3779B97F4A7C15ULL) ^
                    static_cast<uint64_t>(now.tv_nsec) ^ 1;
}

uint64_t hash_frames(void* const* frames, unsigned depth) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (unsigned i = 0; i < depth; ++i) {
        hash = (hash ^ reinterpret_cast<uintptr_t>(frames[i])) * 0x100000001b3ULL;
    }
    return hash | 2; // never 0 or 1
}

// The stack's index, written if new; no_stack when its probe run is full.
uint32_t intern_stack(Tables& tables, void* const* frames, unsigned depth) {
    uint64_t hash = hash_frames(frames, depth);
    for (unsigned probe = 0; probe < stack_probes; ++probe) {
        auto index = static_cast<uint32_t>((hash + probe) % stack_count);
        Stack& stack = tables.stacks[index];
        uint64_t key = stack.key.load(std::memory_order_acquire);
        if (key == empty && stack.key.compare_exchange_strong(key, claimed)) {
            stack.depth = depth;
            std::memcpy(stack.frames, frames, depth * sizeof(void*));
            stack.key.store(hash, std::memory_order_release);
            return index;
        }
        if (key == hash && stack.depth == depth &&
            std::memcmp(stack.frames, frames, depth * sizeof(void*)) == 0) {
            return index;
        }
    } // a stack being written (key 1) is passed over: at worst written twice
    return no_stack;
}

bool thread_sampled(const SamplerState& state) {
    bool active = true;
    size_t size = sizeof(active);
    return !state.prof || state.mallctl("thread.prof.active", &active, &size, nullptr, 0) != 0 ||
           active;
}

void keep(SamplerState& state, Tables& tables, uintptr_t address, uint64_t size) {
    void* frames[max_depth];
    unsigned depth = 0;
    state.backtrace(frames, &depth, max_depth);
    uint32_t stack = intern_stack(tables, frames, depth);
    size_t index = bucket_of(address);
    Bucket& bucket = tables.buckets[index];
    for (size_t way = 0; stack != no_stack && way < ways; ++way) {
        uintptr_t expected = empty;
        if (bucket.addresses[way].compare_exchange_strong(expected, claimed,
                                                          std::memory_order_acquire)) {
            size_t slot = index * ways + way;
            tables.sizes[slot].store(size, std::memory_order_relaxed);
            tables.stacks_of[slot].store(stack, std::memory_order_relaxed);
            bucket.addresses[way].store(address, std::memory_order_release);
            // Before the program has the pointer: whoever frees it sees the count.
            tables.counts[index].fetch_add(1, std::memory_order_release);
            return;
        }
    }
    state.dropped.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

void sample_slow(SamplerState& state, ThreadState& thread, uintptr_t address, uint64_t size) {
    if (thread.random == 0) { // the thread's first allocation: the countdown starts here
        seed(thread);
        thread.countdown = draw_countdown(thread, state.mean_bytes) - static_cast<int64_t>(size);
        if (thread.countdown > 0) {
            return;
        }
    }
    thread.countdown = draw_countdown(thread, state.mean_bytes);
    Tables* tables = state.tables.load(std::memory_order_acquire);
    if (thread.inside || tables == nullptr || !thread_sampled(state)) {
        return;
    }
    thread.inside = true;
    keep(state, *tables, address, size);
    thread.inside = false;
}

void drop_slow(Tables& tables, size_t index, uintptr_t address) {
    for (auto& way : tables.buckets[index].addresses) {
        uintptr_t expected = address;
        if (way.load(std::memory_order_relaxed) == address &&
            way.compare_exchange_strong(expected, empty, std::memory_order_acq_rel)) {
            tables.counts[index].fetch_sub(1, std::memory_order_relaxed);
            return;
        }
    }
}

} // namespace heapkit::runtime::sampling
