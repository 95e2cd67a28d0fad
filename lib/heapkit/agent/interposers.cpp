// SPDX-License-Identifier: MIT
// libheapkit-fragmentation.so: the exact fragmentation profile's way in without jemalloc's
// hooks (heapkit-agent(7), HEAPKIT_FRAGMENTATION). Preloaded beside libheapkit-agent.so,
// it defines every allocating and freeing function jemalloc exports and passes each call
// on to the next definition (next_allocator.hpp), so jemalloc keeps its fast paths; once
// the agent's core starts the sampler (fragmentation_sampler.cpp, through
// heapkit_fragmentation_interposer), an allocation counts down a thread-local byte
// countdown (sample_table.hpp) and a free reads one byte of the sample's counts. Until
// then, and in every process where the agent does not start it, a call costs one load
// more than jemalloc's own.
//
// The sample follows the pointer: a free through any entry point (free, dallocx,
// sdallocx, realloc to 0, every operator delete) takes the object out before jemalloc
// has it back; realloc and rallocx take the old pointer out and count the new one as an
// allocation of the size asked (as jemalloc's heap profile does); xallocx resizes in place
// and leaves the sample as it was (the probability it was kept with is unchanged).
#include "heapkit/runtime/sample_table.hpp"
#include "next_allocator.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>

namespace {

using heapkit::agent::Entry;
using heapkit::agent::next_allocator;
using heapkit::agent::NextAllocator;
namespace sampling = heapkit::runtime::sampling;

sampling::SamplerState g_sampler;

template <typename Function> Function function(const NextAllocator& next, Entry entry) {
    return reinterpret_cast<Function>(next.functions[entry]);
}

// An allocation of `size` bytes through `entry` returned `result`.
inline void allocated(const NextAllocator& next, Entry entry, void* result, uint64_t size) {
    if (next.sampled[entry]) {
        sampling::note_allocation(g_sampler, result, size);
    }
}

// `pointer` is about to be freed through `entry`: false when the start-up arena holds it
// (it is not jemalloc's to free).
inline bool freeing(const NextAllocator& next, Entry entry, void* pointer) {
    if (next.sampled[entry]) {
        sampling::note_free(g_sampler, pointer);
    }
    return !heapkit::agent::in_startup_arena(pointer);
}

// A block of the start-up arena resized: moved to jemalloc (or a larger block).
void* moved_from_startup(void* pointer, size_t size) {
    void* moved = malloc(size);
    if (moved != nullptr) {
        size_t old = heapkit::agent::startup_block_size(pointer);
        std::memcpy(moved, pointer, old < size ? old : size);
    }
    return moved;
}

// operator new's four forms (and new[]'s), passed on with their arguments.
template <Entry entry, typename... Rest> void* new_form(size_t size, Rest... rest) {
    const NextAllocator* next = next_allocator();
    if (next == nullptr) {
        return heapkit::agent::startup_allocate(size, 64);
    }
    void* result = function<void* (*)(size_t, Rest...)>(*next, entry)(size, rest...);
    allocated(*next, entry, result, size);
    return result;
}

// operator delete's six forms (and delete[]'s).
template <Entry entry, typename... Rest> void delete_form(void* pointer, Rest... rest) {
    const NextAllocator* next = next_allocator();
    if (next != nullptr && freeing(*next, entry, pointer)) {
        function<void (*)(void*, Rest...)>(*next, entry)(pointer, rest...);
    }
}

} // namespace

#define HEAPKIT_EXPORT __attribute__((visibility("default")))

extern "C" {

HEAPKIT_EXPORT const sampling::InterposerInfo* heapkit_fragmentation_interposer(uint32_t abi) {
    static sampling::InterposerInfo info{};
    const NextAllocator* next = next_allocator();
    if (abi != sampling::sampler_abi || next == nullptr) {
        return nullptr;
    }
    info.state = &g_sampler;
    info.next_malloc = next->functions[heapkit::agent::e_malloc];
    info.code = reinterpret_cast<const void*>(&heapkit_fragmentation_interposer);
    return &info;
}

HEAPKIT_EXPORT void* malloc(size_t size) noexcept {
    const NextAllocator* next = next_allocator();
    if (next == nullptr) {
        return heapkit::agent::startup_allocate(size, 16);
    }
    void* result = function<void* (*)(size_t)>(*next, heapkit::agent::e_malloc)(size);
    allocated(*next, heapkit::agent::e_malloc, result, size);
    return result;
}

HEAPKIT_EXPORT void* calloc(size_t count, size_t size) noexcept {
    size_t bytes = 0;
    if (__builtin_mul_overflow(count, size, &bytes)) {
        bytes = SIZE_MAX; // the next calloc refuses it
    }
    const NextAllocator* next = next_allocator();
    if (next == nullptr) {
        return bytes == SIZE_MAX ? nullptr : heapkit::agent::startup_allocate(bytes, 16);
    }
    void* result =
        function<void* (*)(size_t, size_t)>(*next, heapkit::agent::e_calloc)(count, size);
    allocated(*next, heapkit::agent::e_calloc, result, bytes);
    return result;
}

HEAPKIT_EXPORT void* realloc(void* pointer, size_t size) noexcept {
    const NextAllocator* next = next_allocator();
    if (next == nullptr || heapkit::agent::in_startup_arena(pointer)) {
        return next == nullptr ? heapkit::agent::startup_allocate(size, 16)
                               : moved_from_startup(pointer, size);
    }
    freeing(*next, heapkit::agent::e_realloc, pointer);
    void* result =
        function<void* (*)(void*, size_t)>(*next, heapkit::agent::e_realloc)(pointer, size);
    allocated(*next, heapkit::agent::e_realloc, result, size);
    return result;
}

HEAPKIT_EXPORT void free(void* pointer) noexcept {
    const NextAllocator* next = next_allocator();
    if (next != nullptr && freeing(*next, heapkit::agent::e_free, pointer)) {
        function<void (*)(void*)>(*next, heapkit::agent::e_free)(pointer);
    }
}

HEAPKIT_EXPORT int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
    const NextAllocator* next = next_allocator();
    if (next == nullptr) {
        *out = heapkit::agent::startup_allocate(size, alignment);
        return *out != nullptr ? 0 : ENOMEM;
    }
    int error = function<int (*)(void**, size_t, size_t)>(*next, heapkit::agent::e_posix_memalign)(
        out, alignment, size);
    if (error == 0) {
        allocated(*next, heapkit::agent::e_posix_memalign, *out, size);
    }
    return error;
}

HEAPKIT_EXPORT void* aligned_alloc(size_t alignment, size_t size) noexcept {
    const NextAllocator* next = next_allocator();
    if (next == nullptr) {
        return heapkit::agent::startup_allocate(size, alignment);
    }
    void* result = function<void* (*)(size_t, size_t)>(*next, heapkit::agent::e_aligned_alloc)(
        alignment, size);
    allocated(*next, heapkit::agent::e_aligned_alloc, result, size);
    return result;
}

HEAPKIT_EXPORT void* memalign(size_t alignment, size_t size) noexcept {
    const NextAllocator* next = next_allocator();
    if (next == nullptr) {
        return heapkit::agent::startup_allocate(size, alignment);
    }
    void* result =
        function<void* (*)(size_t, size_t)>(*next, heapkit::agent::e_memalign)(alignment, size);
    allocated(*next, heapkit::agent::e_memalign, result, size);
    return result;
}

HEAPKIT_EXPORT void* valloc(size_t size) noexcept {
    const NextAllocator* next = next_allocator();
    if (next == nullptr) {
        return heapkit::agent::startup_allocate(size, 4096);
    }
    void* result = function<void* (*)(size_t)>(*next, heapkit::agent::e_valloc)(size);
    allocated(*next, heapkit::agent::e_valloc, result, size);
    return result;
}

// jemalloc's own API: passed on where the next object has it (a program that calls it
// links to jemalloc); else it fails as an allocation does.
HEAPKIT_EXPORT void* mallocx(size_t size, int flags) {
    const NextAllocator* next = next_allocator();
    if (next == nullptr || next->functions[heapkit::agent::e_mallocx] == nullptr) {
        return nullptr;
    }
    void* result = function<void* (*)(size_t, int)>(*next, heapkit::agent::e_mallocx)(size, flags);
    allocated(*next, heapkit::agent::e_mallocx, result, size);
    return result;
}

HEAPKIT_EXPORT void* rallocx(void* pointer, size_t size, int flags) {
    const NextAllocator* next = next_allocator();
    if (next == nullptr || next->functions[heapkit::agent::e_rallocx] == nullptr) {
        return nullptr;
    }
    if (heapkit::agent::in_startup_arena(pointer)) {
        return moved_from_startup(pointer, size);
    }
    freeing(*next, heapkit::agent::e_rallocx, pointer);
    void* result = function<void* (*)(void*, size_t, int)>(*next, heapkit::agent::e_rallocx)(
        pointer, size, flags);
    allocated(*next, heapkit::agent::e_rallocx, result, size);
    return result;
}

HEAPKIT_EXPORT size_t xallocx(void* pointer, size_t size, size_t extra, int flags) {
    const NextAllocator* next = next_allocator();
    if (next == nullptr || next->functions[heapkit::agent::e_xallocx] == nullptr ||
        heapkit::agent::in_startup_arena(pointer)) {
        return 0;
    }
    return function<size_t (*)(void*, size_t, size_t, int)>(*next, heapkit::agent::e_xallocx)(
        pointer, size, extra, flags);
}

HEAPKIT_EXPORT void dallocx(void* pointer, int flags) {
    const NextAllocator* next = next_allocator();
    if (next == nullptr || next->functions[heapkit::agent::e_dallocx] == nullptr) {
        free(pointer);
    } else if (freeing(*next, heapkit::agent::e_dallocx, pointer)) {
        function<void (*)(void*, int)>(*next, heapkit::agent::e_dallocx)(pointer, flags);
    }
}

HEAPKIT_EXPORT void sdallocx(void* pointer, size_t size, int flags) {
    const NextAllocator* next = next_allocator();
    if (next == nullptr || next->functions[heapkit::agent::e_sdallocx] == nullptr) {
        free(pointer);
    } else if (freeing(*next, heapkit::agent::e_sdallocx, pointer)) {
        function<void (*)(void*, size_t, int)>(*next, heapkit::agent::e_sdallocx)(pointer, size,
                                                                                  flags);
    }
}

} // extern "C"

// The C++ operators jemalloc exports (Debian's libjemalloc2 has all twenty).
using nothrow = const std::nothrow_t&;
using heapkit::agent::Entry;

HEAPKIT_EXPORT void* operator new(size_t size) {
    return new_form<Entry::e_new>(size);
}
HEAPKIT_EXPORT void* operator new(size_t size, nothrow tag) noexcept {
    return new_form<Entry::e_new_nothrow, nothrow>(size, tag);
}
HEAPKIT_EXPORT void* operator new(size_t size, std::align_val_t alignment) {
    return new_form<Entry::e_new_aligned>(size, alignment);
}
HEAPKIT_EXPORT void* operator new(size_t size, std::align_val_t alignment, nothrow tag) noexcept {
    return new_form<Entry::e_new_aligned_nothrow, std::align_val_t, nothrow>(size, alignment, tag);
}
HEAPKIT_EXPORT void* operator new[](size_t size) {
    return new_form<Entry::e_new_array>(size);
}
HEAPKIT_EXPORT void* operator new[](size_t size, nothrow tag) noexcept {
    return new_form<Entry::e_new_array_nothrow, nothrow>(size, tag);
}
HEAPKIT_EXPORT void* operator new[](size_t size, std::align_val_t alignment) {
    return new_form<Entry::e_new_array_aligned>(size, alignment);
}
HEAPKIT_EXPORT void* operator new[](size_t size, std::align_val_t alignment, nothrow tag) noexcept {
    return new_form<Entry::e_new_array_aligned_nothrow, std::align_val_t, nothrow>(size, alignment,
                                                                                   tag);
}

HEAPKIT_EXPORT void operator delete(void* pointer) noexcept {
    delete_form<Entry::e_delete>(pointer);
}
HEAPKIT_EXPORT void operator delete(void* pointer, nothrow tag) noexcept {
    delete_form<Entry::e_delete_nothrow, nothrow>(pointer, tag);
}
HEAPKIT_EXPORT void operator delete(void* pointer, std::align_val_t alignment) noexcept {
    delete_form<Entry::e_delete_aligned>(pointer, alignment);
}
HEAPKIT_EXPORT void operator delete(void* pointer, std::align_val_t alignment,
                                    nothrow tag) noexcept {
    delete_form<Entry::e_delete_aligned_nothrow, std::align_val_t, nothrow>(pointer, alignment,
                                                                            tag);
}
HEAPKIT_EXPORT void operator delete(void* pointer, size_t size) noexcept {
    delete_form<Entry::e_delete_sized>(pointer, size);
}
HEAPKIT_EXPORT void operator delete(void* pointer, size_t size,
                                    std::align_val_t alignment) noexcept {
    delete_form<Entry::e_delete_sized_aligned>(pointer, size, alignment);
}
HEAPKIT_EXPORT void operator delete[](void* pointer) noexcept {
    delete_form<Entry::e_delete_array>(pointer);
}
HEAPKIT_EXPORT void operator delete[](void* pointer, nothrow tag) noexcept {
    delete_form<Entry::e_delete_array_nothrow, nothrow>(pointer, tag);
}
HEAPKIT_EXPORT void operator delete[](void* pointer, std::align_val_t alignment) noexcept {
    delete_form<Entry::e_delete_array_aligned>(pointer, alignment);
}
HEAPKIT_EXPORT void operator delete[](void* pointer, std::align_val_t alignment,
                                      nothrow tag) noexcept {
    delete_form<Entry::e_delete_array_aligned_nothrow, std::align_val_t, nothrow>(pointer,
                                                                                  alignment, tag);
}
HEAPKIT_EXPORT void operator delete[](void* pointer, size_t size) noexcept {
    delete_form<Entry::e_delete_array_sized>(pointer, size);
}
HEAPKIT_EXPORT void operator delete[](void* pointer, size_t size,
                                      std::align_val_t alignment) noexcept {
    delete_form<Entry::e_delete_array_sized_aligned>(pointer, size, alignment);
}
