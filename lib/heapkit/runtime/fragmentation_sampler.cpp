// SPDX-License-Identifier: MIT
// The fragmentation sampler (fragmentation_sampler.hpp). Inside jemalloc's hooks, on any
// thread, in the middle of the host's malloc and free: nothing here allocates through
// malloc, takes a lock, or waits. What it keeps is in one private anonymous mapping made
// before the hooks are installed, never freed (a hook may still run after a removal):
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
#include "heapkit/runtime/fragmentation_sampler.hpp"

#include "heapkit/runtime/notices.hpp"

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fmt/format.h>
#include <mutex>
#include <string_view>
#include <sys/mman.h>

namespace heapkit::runtime {
namespace {

constexpr size_t ways = 8;
constexpr size_t bucket_count = 8192;
constexpr size_t slot_count = ways * bucket_count;
constexpr size_t stack_count = 2048;
constexpr unsigned stack_probes = 64;
constexpr uint32_t no_stack = UINT32_MAX;

constexpr uintptr_t empty = 0;
constexpr uintptr_t claimed = 1; // a thread is writing the slot's size and stack

struct alignas(64) Bucket {
    std::atomic<uintptr_t> addresses[ways];
};

struct Stack {
    std::atomic<uint64_t> key; // 0: empty, 1: being written, else the frames' hash
    uint32_t depth;
    uint64_t frames[fragmentation_max_depth];
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

// jemalloc 5.3's hooks_t (include/jemalloc/internal/hook.h), the ABI of
// experimental.hooks.install; `type` is its hook_alloc_t (an int).
using AllocHook = void (*)(void*, int, void*, uintptr_t, uintptr_t*);
using DallocHook = void (*)(void*, int, void*, uintptr_t*);
using ExpandHook = void (*)(void*, int, void*, size_t, size_t, uintptr_t, uintptr_t*);
struct Hooks {
    AllocHook alloc;
    DallocHook dalloc;
    ExpandHook expand;
    void* extra;
};
using Backtrace = void (*)(void**, unsigned*, unsigned);

// Set once, before the hooks are installed; read by them.
Tables* g_tables = nullptr;
double g_mean_bytes = 0;
Backtrace g_backtrace = nullptr;
MallctlFunction g_mallctl = nullptr;
bool g_prof = false; // opt.prof: thread.prof.active says whether a thread is sampled
std::atomic<uint64_t> g_dropped{0};

// Per thread: the countdown and its generator. Initial-exec: a dynamic TLS block would be
// allocated through malloc on the thread's first hook call. All zero in a new thread.
struct ThreadState {
    uint64_t random;
    int64_t countdown;
};
__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

uint64_t next_random(ThreadState& state) { // xorshift64*
    state.random ^= state.random >> 12;
    state.random ^= state.random << 25;
    state.random ^= state.random >> 27;
    return state.random * 0x2545F4914F6CDD1DULL;
}

int64_t draw_countdown(ThreadState& state) {
    double uniform = static_cast<double>((next_random(state) >> 11) + 1) * 0x1.0p-53;
    return static_cast<int64_t>(-std::log(uniform) * g_mean_bytes);
}

void seed(ThreadState& state) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    state.random = (reinterpret_cast<uintptr_t>(&state) * 0x9E3779B97F4A7C15ULL) ^
                   static_cast<uint64_t>(now.tv_nsec) ^ 1;
    state.countdown = draw_countdown(state);
}

// The bytes asked for, from each allocating call's arguments (jemalloc.c, arena.c).
uint64_t requested_size(int type, const uintptr_t* args) {
    switch (type) {
    case 1: // posix_memalign(memptr, alignment, size)
        return args[2];
    case 2: // aligned_alloc(alignment, size)
    case 4: // memalign(alignment, size)
    case 7: // realloc(ptr, size)
    case 8: // rallocx(ptr, size, flags)
        return args[1];
    case 3: // calloc(num, size)
        return args[0] * args[1];
    default: // malloc, valloc, mallocx
        return args[0];
    }
}

size_t bucket_of(uintptr_t address) {
    return ((address >> 4) * 0x9E3779B97F4A7C15ULL) >> 51; // 13 bits
}

uint64_t hash_frames(void* const* frames, unsigned depth) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (unsigned i = 0; i < depth; ++i) {
        hash = (hash ^ reinterpret_cast<uintptr_t>(frames[i])) * 0x100000001b3ULL;
    }
    return hash | 2; // never 0 or 1
}

// The stack's index, written if new; no_stack when its probe run is full.
uint32_t intern_stack(void* const* frames, unsigned depth) {
    uint64_t hash = hash_frames(frames, depth);
    for (unsigned probe = 0; probe < stack_probes; ++probe) {
        auto index = static_cast<uint32_t>((hash + probe) % stack_count);
        Stack& stack = g_tables->stacks[index];
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

bool thread_sampled() {
    bool active = true;
    size_t size = sizeof(active);
    return !g_prof || g_mallctl("thread.prof.active", &active, &size, nullptr, 0) != 0 || active;
}

void keep(uintptr_t address, uint64_t size) {
    if (!thread_sampled()) {
        return;
    }
    void* frames[fragmentation_max_depth];
    unsigned depth = 0;
    g_backtrace(frames, &depth, fragmentation_max_depth);
    uint32_t stack = intern_stack(frames, depth);
    size_t index = bucket_of(address);
    Bucket& bucket = g_tables->buckets[index];
    for (size_t way = 0; stack != no_stack && way < ways; ++way) {
        uintptr_t expected = empty;
        if (bucket.addresses[way].compare_exchange_strong(expected, claimed,
                                                          std::memory_order_acquire)) {
            size_t slot = index * ways + way;
            g_tables->sizes[slot].store(size, std::memory_order_relaxed);
            g_tables->stacks_of[slot].store(stack, std::memory_order_relaxed);
            bucket.addresses[way].store(address, std::memory_order_release);
            // Before the program has the pointer: whoever frees it sees the count.
            g_tables->counts[index].fetch_add(1, std::memory_order_release);
            return;
        }
    }
    g_dropped.fetch_add(1, std::memory_order_relaxed);
}

void on_alloc(void*, int type, void* result, uintptr_t, uintptr_t* args) {
    if (result == nullptr) {
        return;
    }
    ThreadState& state = t_state;
    if (state.random == 0) {
        seed(state);
    }
    uint64_t size = requested_size(type, args);
    state.countdown -= static_cast<int64_t>(size);
    if (state.countdown > 0) {
        return;
    }
    state.countdown = draw_countdown(state);
    keep(reinterpret_cast<uintptr_t>(result), size);
}

void on_dalloc(void*, int, void* pointer, uintptr_t*) {
    auto address = reinterpret_cast<uintptr_t>(pointer);
    if (address <= claimed) {
        return;
    }
    size_t index = bucket_of(address);
    if (g_tables->counts[index].load(std::memory_order_acquire) == 0) {
        return;
    }
    for (auto& way : g_tables->buckets[index].addresses) {
        uintptr_t expected = address;
        if (way.load(std::memory_order_relaxed) == address &&
            way.compare_exchange_strong(expected, empty, std::memory_order_acq_rel)) {
            g_tables->counts[index].fetch_sub(1, std::memory_order_relaxed);
            return;
        }
    }
}

Result<void> install(const Mallctl& mallctl, unsigned lg_sample) {
    auto backtrace = mallctl.read<Backtrace>("experimental.hooks.prof_backtrace");
    if (!backtrace || *backtrace == nullptr) {
        return fail("{} has no experimental.hooks.prof_backtrace (a jemalloc 5.3 built with "
                    "--enable-prof is needed to unwind the sampled allocations)",
                    mallctl.copy().object);
    }
    void* mapped = mmap(nullptr, sizeof(Tables), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == MAP_FAILED) {
        return fail("cannot map {} bytes for the fragmentation sample: {}", sizeof(Tables),
                    std::strerror(errno));
    }
    g_tables = static_cast<Tables*>(mapped); // zero pages: every slot empty
    g_mean_bytes = std::ldexp(1.0, static_cast<int>(lg_sample));
    g_backtrace = *backtrace;
    g_mallctl = mallctl.copy().mallctl;
    g_prof = mallctl.read<bool>("opt.prof").value_or(false);
    Hooks hooks{on_alloc, on_dalloc, nullptr, nullptr};
    void* handle = nullptr;
    size_t size = sizeof(handle);
    int error = g_mallctl("experimental.hooks.install", &handle, &size, &hooks, sizeof(hooks));
    if (error != 0) {
        return fail("{}: experimental.hooks.install failed ({}): no fragmentation profile",
                    mallctl.copy().object,
                    error == EAGAIN ? "its four hooks are taken" : std::strerror(error));
    }
    return {};
}

} // namespace

Result<std::optional<unsigned>> parse_fragmentation_setting(const char* value) {
    std::string_view text = value == nullptr ? "" : value;
    if (text.empty() || text == "0" || text == "off" || text == "no" || text == "false") {
        return std::nullopt;
    }
    if (text == "1" || text == "on" || text == "yes" || text == "true") {
        return 19u;
    }
    constexpr std::string_view prefix = "lg_sample:";
    unsigned lg = 0;
    if (text.starts_with(prefix) && text.size() > prefix.size() &&
        text.size() <= prefix.size() + 2) {
        bool digits = true;
        for (char c : text.substr(prefix.size())) {
            digits = digits && c >= '0' && c <= '9';
            lg = lg * 10 + static_cast<unsigned>(c - '0');
        }
        if (digits && lg <= 30) {
            return lg;
        }
    }
    return fail("HEAPKIT_FRAGMENTATION={}: expected 1 (one sample per 512 KiB allocated on "
                "average), lg_sample:N (per 2^N bytes, N from 0 to 30) or 0",
                text);
}

Result<void> start_fragmentation_sampling(const Mallctl& mallctl, unsigned lg_sample) {
    static std::mutex mutex;
    static std::optional<Result<void>> first;
    std::lock_guard lock(mutex);
    if (!first) {
        first = install(mallctl, lg_sample);
    }
    return *first;
}

void start_fragmentation_from_environment() {
    auto lg_sample = parse_fragmentation_setting(std::getenv("HEAPKIT_FRAGMENTATION"));
    if (!lg_sample) {
        notice_once("fragmentation", lg_sample.error().message + ": no fragmentation profile");
        return;
    }
    if (!*lg_sample) {
        return;
    }
    auto mallctl = Mallctl::find();
    auto started = mallctl ? start_fragmentation_sampling(*mallctl, **lg_sample)
                           : Result<void>(tl::unexpected(mallctl.error()));
    notice_once("fragmentation",
                started ? fmt::format("fragmentation sampling on: one allocation per {} bytes "
                                      "on average (/debug/pprof/fragmentation)",
                                      uint64_t{1} << **lg_sample)
                        : started.error().message);
}

bool fragmentation_sampling() {
    return g_tables != nullptr;
}

Result<FragmentationSample> fragmentation_sample() {
    if (g_tables == nullptr) {
        return fail("the fragmentation profile is off: start the program with "
                    "HEAPKIT_FRAGMENTATION=1");
    }
    FragmentationSample sample;
    sample.mean_bytes = static_cast<uint64_t>(g_mean_bytes);
    sample.dropped = g_dropped.load(std::memory_order_relaxed);
    for (size_t slot = 0; slot < slot_count; ++slot) {
        auto& way = g_tables->buckets[slot / ways].addresses[slot % ways];
        uintptr_t address = way.load(std::memory_order_acquire);
        if (address <= claimed) {
            continue;
        }
        uint64_t size = g_tables->sizes[slot].load(std::memory_order_relaxed);
        uint32_t index = g_tables->stacks_of[slot].load(std::memory_order_relaxed);
        if (way.load(std::memory_order_acquire) != address || index >= stack_count) {
            continue; // freed (and perhaps taken again) meanwhile
        }
        const Stack& stack = g_tables->stacks[index];
        SampledObject object;
        object.address = address;
        object.size = size;
        object.frames.assign(stack.frames, stack.frames + stack.depth);
        sample.objects.push_back(std::move(object));
    }
    return sample;
}

} // namespace heapkit::runtime
