// SPDX-License-Identifier: MIT
// The next allocator's functions (next_allocator.hpp), looked up by name once. Two threads
// that look it up at once (before the constructor, in a program that starts threads that
// early) each use what they found; the first one's table is kept.
#include "next_allocator.hpp"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <new>

namespace heapkit::agent {

std::atomic<const NextAllocator*> g_next_allocator{nullptr};
alignas(4096) unsigned char g_startup_arena[startup_arena_size];

namespace {

// jemalloc 5.3's exported names (nm -D libjemalloc.so.2), in the order of Entry.
constexpr const char* entry_names[entry_count] = {
    "malloc",
    "calloc",
    "realloc",
    "free",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "valloc",
    "mallocx",
    "rallocx",
    "xallocx",
    "dallocx",
    "sdallocx",
    "_Znwm",
    "_ZnwmRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_Znam",
    "_ZnamRKSt9nothrow_t",
    "_ZnamSt11align_val_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdlPvm",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPv",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdaPvSt11align_val_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvm",
    "_ZdaPvmSt11align_val_t",
};

constexpr size_t header = 16; // each start-up block's size, before it

std::atomic<size_t> g_startup_used{0};
__thread bool t_looking_up __attribute__((tls_model("initial-exec")));
// A thread that looked the table up while another published it: its own copy.
__thread NextAllocator t_own __attribute__((tls_model("initial-exec")));
NextAllocator g_published;
std::atomic<bool> g_claimed{false};

// Where no C++ library defines an operator (a C program that loads one later): malloc and
// free by name, which the interposers sample. Without a C++ library to throw
// std::bad_alloc, a failed throwing new aborts.
template <bool throwing, typename... Ignored> void* fallback_new(size_t size, Ignored...) {
    void* result = std::malloc(size != 0 ? size : 1);
    if (throwing && result == nullptr) {
        std::abort();
    }
    return result;
}

template <bool throwing, typename... Ignored>
void* fallback_new_aligned(size_t size, std::align_val_t alignment, Ignored...) {
    void* result = nullptr;
    size_t align = static_cast<size_t>(alignment);
    if (posix_memalign(&result, align < sizeof(void*) ? sizeof(void*) : align,
                       size != 0 ? size : 1) != 0 &&
        throwing) {
        std::abort();
    }
    return result;
}

template <typename... Ignored> void fallback_delete(void* pointer, Ignored...) {
    std::free(pointer);
}

void* fallback(Entry entry) {
    using nothrow = const std::nothrow_t&;
    using align = std::align_val_t;
    switch (entry) {
    case e_new:
    case e_new_array:
        return reinterpret_cast<void*>(&fallback_new<true>);
    case e_new_nothrow:
    case e_new_array_nothrow:
        return reinterpret_cast<void*>(&fallback_new<false, nothrow>);
    case e_new_aligned:
    case e_new_array_aligned:
        return reinterpret_cast<void*>(&fallback_new_aligned<true>);
    case e_new_aligned_nothrow:
    case e_new_array_aligned_nothrow:
        return reinterpret_cast<void*>(&fallback_new_aligned<false, nothrow>);
    case e_delete:
    case e_delete_array:
        return reinterpret_cast<void*>(&fallback_delete<>);
    case e_delete_nothrow:
    case e_delete_array_nothrow:
        return reinterpret_cast<void*>(&fallback_delete<nothrow>);
    case e_delete_aligned:
    case e_delete_array_aligned:
        return reinterpret_cast<void*>(&fallback_delete<align>);
    case e_delete_aligned_nothrow:
    case e_delete_array_aligned_nothrow:
        return reinterpret_cast<void*>(&fallback_delete<align, nothrow>);
    case e_delete_sized:
    case e_delete_array_sized:
        return reinterpret_cast<void*>(&fallback_delete<size_t>);
    case e_delete_sized_aligned:
    case e_delete_array_sized_aligned:
        return reinterpret_cast<void*>(&fallback_delete<size_t, align>);
    default:
        return nullptr; // a C function jemalloc exports: the program links to it
    }
}

const void* object_of(const void* function) {
    Dl_info info{};
    return function != nullptr && dladdr(function, &info) != 0 ? info.dli_fbase : nullptr;
}

void look_up(NextAllocator& next) {
    for (unsigned entry = 0; entry < entry_count; ++entry) {
        next.functions[entry] = dlsym(RTLD_NEXT, entry_names[entry]);
    }
    const void* allocator = object_of(next.functions[e_malloc]);
    for (unsigned entry = 0; entry < entry_count; ++entry) {
        next.sampled[entry] =
            next.functions[entry] != nullptr && object_of(next.functions[entry]) == allocator;
        if (next.functions[entry] == nullptr) {
            next.functions[entry] = fallback(static_cast<Entry>(entry));
        }
    }
}

// Before the program's own constructors, on its first thread.
__attribute__((constructor(101))) void look_up_at_start() {
    next_allocator();
}

} // namespace

const NextAllocator* look_up_next_allocator() {
    if (t_looking_up) {
        return nullptr;
    }
    t_looking_up = true;
    NextAllocator found{};
    look_up(found);
    t_looking_up = false;
    bool expected = false;
    if (!g_claimed.compare_exchange_strong(expected, true)) {
        t_own = found;
        return &t_own;
    }
    g_published = found;
    g_next_allocator.store(&g_published, std::memory_order_release);
    return &g_published;
}

void* startup_allocate(size_t size, size_t alignment) {
    alignment = alignment < header ? header : alignment;
    size_t used = g_startup_used.load(std::memory_order_relaxed);
    size_t start = 0;
    do {
        start = (used + header + alignment - 1) & ~(alignment - 1);
        if (start + size > startup_arena_size || size > startup_arena_size) {
            return nullptr;
        }
    } while (!g_startup_used.compare_exchange_weak(used, start + size));
    std::memcpy(g_startup_arena + start - sizeof(size_t), &size, sizeof(size_t));
    return g_startup_arena + start;
}

size_t startup_block_size(const void* pointer) {
    size_t size = 0;
    std::memcpy(&size, static_cast<const unsigned char*>(pointer) - sizeof(size_t), sizeof(size_t));
    return size;
}

} // namespace heapkit::agent
