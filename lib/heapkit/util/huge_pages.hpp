// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/mman.h>
#include <vector>

namespace heapkit {

// Whether memory from the process's malloc may be advised (advise_huge_pages). Only in a
// tool's own process (run_tool turns it on): inside a host, as the runtime and the agent
// are, that memory is the host's jemalloc's, and the advice would stay on its pages after
// we free them, changing how the host's own allocations there fault (khugepaged, and
// direct compaction where defrag is "madvise"). PodVector's mappings are its own: always.
void allow_huge_heap_pages();
bool huge_heap_pages_allowed();

// Asks for transparent huge pages over the whole 2 MiB pages of [data, data + bytes), to
// be called before they are first touched; `data` from malloc, so only where
// huge_heap_pages_allowed(). For arrays of hundreds of MB read or written in no order (a
// big profile's locations, the ranks of its frame texts): with 4 KiB pages each access was
// a TLB miss on top of a cache miss (BENCHMARKS.md, issue 47). A hint: without it (or
// where the kernel says no), small pages. PodVector does it for its own mappings.
inline void advise_huge_pages(const void* data, size_t bytes) {
    if (!huge_heap_pages_allowed()) {
        return;
    }
    constexpr uintptr_t huge_page = 2 << 20;
    auto start = reinterpret_cast<uintptr_t>(data);
    uintptr_t first = (start + huge_page - 1) & ~(huge_page - 1);
    uintptr_t end = (start + bytes) & ~(huge_page - 1);
    if (first < end) {
        ::madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE);
    }
}

// `values` made room for `count` values, on huge pages where it is big, then resized to
// them: the room is asked for before the values are written.
template <class T> void resize_on_huge_pages(std::vector<T>& values, size_t count) {
    if (count > values.capacity()) {
        values.reserve(count);
        advise_huge_pages(values.data(), values.capacity() * sizeof(T));
    }
    values.resize(count);
}

} // namespace heapkit
