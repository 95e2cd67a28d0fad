// SPDX-License-Identifier: MIT
// The agent's lock-free stack walk (agent/cfi_unwinder.cpp) against libgcc's
// _Unwind_Backtrace, from the same frames: functions of several shapes (a frame pointer
// and alloca, a realigned stack (its CFA a DWARF expression), many callee-saved registers, a tail
// of libc's qsort calling back), in this executable and through a shared library's code.
#include "heapkit/agent/cfi_unwinder.hpp"

#include <cstdint>
#include <cstdlib>
#include <doctest/doctest.h>
#include <unwind.h>
#include <vector>

namespace {

struct Walks {
    std::vector<uintptr_t> ours;
    std::vector<uintptr_t> libgcc;
};

_Unwind_Reason_Code take(_Unwind_Context* context, void* argument) {
    static_cast<std::vector<uintptr_t>*>(argument)->push_back(_Unwind_GetIP(context));
    return _URC_NO_REASON;
}

__attribute__((noinline)) void walk_both(Walks& walks) {
    void* frames[128];
    unsigned count = heapkit::agent::unwind_this_stack(frames, 128, 0, 0);
    for (unsigned i = 1; i < count; ++i) { // [0] is in walk_both itself
        walks.ours.push_back(reinterpret_cast<uintptr_t>(frames[i]));
    }
    _Unwind_Backtrace(take, &walks.libgcc);
    // [0] is in walk_both itself; libgcc ends with the 0 that _start's frame returns to.
    walks.libgcc.erase(walks.libgcc.begin());
    if (!walks.libgcc.empty() && walks.libgcc.back() == 0) {
        walks.libgcc.pop_back();
    }
    asm volatile("" ::: "memory");
}

__attribute__((noinline)) int with_frame_pointer(Walks& walks, int n) {
    // alloca: the frame's size is known at run time only, so its CFA is rbp's.
    auto* buffer = static_cast<volatile char*>(__builtin_alloca(static_cast<size_t>(n) + 16));
    buffer[0] = 1;
    walk_both(walks);
    return buffer[0];
}

// A 64-byte aligned local and alloca: GCC realigns the stack through a dynamic realignment
// pointer, and its CFA and saved rbp are DWARF expressions.
__attribute__((noinline)) int realigned(Walks& walks, int n) {
    alignas(64) volatile char aligned[64];
    aligned[0] = static_cast<char>(n);
    auto* more = static_cast<volatile char*>(__builtin_alloca(static_cast<size_t>(n) + 8));
    more[0] = 1;
    return with_frame_pointer(walks, n) + aligned[0] + more[0];
}

__attribute__((noinline)) long with_saved_registers(Walks& walks, long a, long b, long c) {
    volatile long x = a * b, y = b * c, z = a * c;
    long sum = realigned(walks, static_cast<int>(a));
    return sum + x + y + z;
}

Walks* g_walks = nullptr;

int compare(const void* a, const void* b) {
    if (g_walks != nullptr) {
        Walks& walks = *g_walks;
        g_walks = nullptr; // once a sort
        with_saved_registers(walks, 3, 5, 7);
    }
    return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

__attribute__((noinline)) void through_libc(Walks& walks) {
    g_walks = &walks;
    int values[] = {3, 1, 2};
    std::qsort(values, 3, sizeof(int), compare);
}

} // namespace

TEST_CASE("heapkit::agent::unwind_this_stack walks as libgcc does") {
    REQUIRE(heapkit::agent::cfi_unwinder_available());
    Walks walks;
    through_libc(walks);
    REQUIRE(walks.ours.size() >= 6);
    // Both end where the call frame information ends (_start); ours has walk_both's caller
    // first, as libgcc's has once walk_both's own frame is taken off.
    CHECK(walks.ours == walks.libgcc);
}

TEST_CASE("heapkit::agent::unwind_this_stack passes over the frames it is told to skip") {
    Walks walks;
    through_libc(walks);
    void* frames[128];
    uintptr_t first = walks.ours.at(0);
    unsigned count = heapkit::agent::unwind_this_stack(frames, 2, first - 1, first);
    CHECK(count <= 2);
    unsigned capped = heapkit::agent::unwind_this_stack(frames, 1, 0, 0);
    CHECK(capped == 1);
}
