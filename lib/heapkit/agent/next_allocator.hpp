// SPDX-License-Identifier: MIT
// What libheapkit-fragmentation.so's interposers (interposers.cpp) pass each call on to:
// the next definition of every allocating and freeing function jemalloc 5.3 exports,
// looked up once with dlsym(RTLD_NEXT). The lookup may itself allocate (dlsym's error
// path does) and may come before the object's constructor (ld.so and other libraries'
// constructors allocate first): what the looking-up thread allocates meanwhile comes from
// a start-up arena in this object, which is never given back.
#pragma once

#include <atomic>
#include <cstddef>

namespace heapkit::agent {

// The functions passed on, in the order of entry_names (next_allocator.cpp).
enum Entry : unsigned {
    e_malloc,
    e_calloc,
    e_realloc,
    e_free,
    e_posix_memalign,
    e_aligned_alloc,
    e_memalign,
    e_valloc,
    e_mallocx,
    e_rallocx,
    e_xallocx,
    e_dallocx,
    e_sdallocx,
    e_new,                 // operator new(size_t), _Znwm
    e_new_nothrow,         // (size_t, nothrow_t)
    e_new_aligned,         // (size_t, align_val_t)
    e_new_aligned_nothrow, // (size_t, align_val_t, nothrow_t)
    e_new_array,           // operator new[], the same four
    e_new_array_nothrow,
    e_new_array_aligned,
    e_new_array_aligned_nothrow,
    e_delete,                 // operator delete(void*), _ZdlPv
    e_delete_nothrow,         // (void*, nothrow_t)
    e_delete_aligned,         // (void*, align_val_t)
    e_delete_aligned_nothrow, // (void*, align_val_t, nothrow_t)
    e_delete_sized,           // (void*, size_t)
    e_delete_sized_aligned,   // (void*, size_t, align_val_t)
    e_delete_array,           // operator delete[], the same six
    e_delete_array_nothrow,
    e_delete_array_aligned,
    e_delete_array_aligned_nothrow,
    e_delete_array_sized,
    e_delete_array_sized_aligned,
    entry_count
};

// The next definitions, and for each whether the interposer samples there: only where the
// next definition is in the object of the next malloc (jemalloc's). One that is elsewhere
// (libstdc++'s operator new, which calls malloc by name) is passed on unsampled: the call
// it makes comes back through the interposers. A C++ operator with no next definition is
// served by malloc and free (a fallback of this object's).
struct NextAllocator {
    void* functions[entry_count];
    bool sampled[entry_count];
};

// The table, looked up on first use; null while this thread is looking it up (the
// start-up arena then serves it: startup_allocate).
const NextAllocator* look_up_next_allocator();

extern std::atomic<const NextAllocator*> g_next_allocator __attribute__((visibility("hidden")));

inline const NextAllocator* next_allocator() {
    const NextAllocator* next = g_next_allocator.load(std::memory_order_acquire);
    return next != nullptr ? next : look_up_next_allocator();
}

inline constexpr size_t startup_arena_size = 64 * 1024;
extern unsigned char g_startup_arena[startup_arena_size] __attribute__((visibility("hidden")));

// The start-up arena's blocks: never passed on to jemalloc, never freed.
inline bool in_startup_arena(const void* pointer) {
    auto* byte = static_cast<const unsigned char*>(pointer);
    return byte >= g_startup_arena && byte < g_startup_arena + startup_arena_size;
}
// A block of the start-up arena (zeroed: the arena is never reused), or null when it is
// full; its usable size.
void* startup_allocate(size_t size, size_t alignment);
size_t startup_block_size(const void* pointer);

} // namespace heapkit::agent
