// SPDX-License-Identifier: MIT
// Why the agent replaces jemalloc's backtrace: Debian's jemalloc unwinds a sampled
// allocation's stack with libgcc's _Unwind_Backtrace. LuaJIT registers unwind tables for
// its compiled traces (__register_frame), so libgcc steps from a C function called by a
// trace into the trace's frame, and from there into frames the tables do not describe:
// kresd under heap profiling aborts in libgcc within a minute of queries (SIGABRT, with
// or without the agent, not with jit.off()). Taking the trace's address and stopping
// there keeps every frame that can be named (the C frames below the trace) and never
// asks libgcc to step through what it cannot. Frames in loaded objects are unwound
// exactly as jemalloc's own callback does, so other programs' stacks do not change. In a
// process with LuaJIT the same walk is done without libgcc (cfi_unwinder.hpp), whose
// lookups there take a lock a sampled allocation inside them would wait for forever.
#include "guarded_backtrace.hpp"

#include "cfi_unwinder.hpp"

#include <cstdint>
#include <dlfcn.h>
#include <link.h>
#include <unwind.h>

namespace heapkit::agent {
namespace {

using Backtrace = _Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void*);
using GetIP = _Unwind_Ptr (*)(_Unwind_Context*);

// Resolved once, before the hook is installed: libgcc_s is jemalloc's dependency.
Backtrace g_backtrace = nullptr;
GetIP g_get_ip = nullptr;
// This loader's own text: the hook's frame is not the program's.
uintptr_t g_own_start = 0;
uintptr_t g_own_end = 0;

struct Collected {
    void** frames;
    unsigned* count;
    unsigned capacity;
};

// In a loaded object: _dl_find_object is lock-free and async-signal-safe (glibc 2.35),
// so it may run inside malloc on any thread.
bool in_loaded_object(uintptr_t address, dl_find_object* found) {
    return _dl_find_object(reinterpret_cast<void*>(address), found) == 0;
}

_Unwind_Reason_Code take_frame(_Unwind_Context* context, void* argument) {
    auto* collected = static_cast<Collected*>(argument);
    uintptr_t address = g_get_ip(context); // a return address: its call is at address - 1
    if (address == 0) {
        return _URC_END_OF_STACK;
    }
    if (address - 1 >= g_own_start && address - 1 < g_own_end) {
        return _URC_NO_REASON;
    }
    collected->frames[(*collected->count)++] = reinterpret_cast<void*>(address);
    dl_find_object found;
    if (*collected->count == collected->capacity || !in_loaded_object(address - 1, &found)) {
        return _URC_END_OF_STACK;
    }
    return _URC_NO_REASON;
}

void guarded_backtrace(void** frames, unsigned* count, unsigned capacity) {
    *count = 0;
    if (capacity == 0) {
        return;
    }
    Collected collected{frames, count, capacity};
    g_backtrace(take_frame, &collected);
}

// The same frames, walked without libgcc (cfi_unwinder.hpp says why): where LuaJIT has
// registered unwind tables, libgcc's lookups take a mutex that a sampled allocation made
// inside them would wait for forever.
void lock_free_backtrace(void** frames, unsigned* count, unsigned capacity) {
    *count = unwind_this_stack(frames, capacity, g_own_start, g_own_end);
}

// Set once unwind tables are registered (LuaJIT loaded from the start, or any later
// __register_frame call: a module dlopen'ed, a static LuaJIT): from then on the walk is
// lock-free.
bool g_tables_registered = false;

void chosen_backtrace(void** frames, unsigned* count, unsigned capacity) {
    if (__atomic_load_n(&g_tables_registered, __ATOMIC_RELAXED) && cfi_unwinder_available()) {
        lock_free_backtrace(frames, count, capacity);
    } else {
        guarded_backtrace(frames, count, capacity);
    }
}

} // namespace

void note_registered_unwind_tables() {
    __atomic_store_n(&g_tables_registered, true, __ATOMIC_RELAXED);
}

bool install_guarded_backtrace(Mallctl mallctl, bool registered_unwind_tables) {
    bool libgcc = false;
    size_t size = sizeof(libgcc);
    if (mallctl("config.prof_libgcc", &libgcc, &size, nullptr, 0) != 0 || !libgcc) {
        return false;
    }
    g_backtrace = reinterpret_cast<Backtrace>(dlsym(RTLD_DEFAULT, "_Unwind_Backtrace"));
    g_get_ip = reinterpret_cast<GetIP>(dlsym(RTLD_DEFAULT, "_Unwind_GetIP"));
    dl_find_object own;
    if (g_backtrace == nullptr || g_get_ip == nullptr ||
        !in_loaded_object(reinterpret_cast<uintptr_t>(&guarded_backtrace), &own)) {
        return false;
    }
    g_own_start = reinterpret_cast<uintptr_t>(own.dlfo_map_start);
    g_own_end = reinterpret_cast<uintptr_t>(own.dlfo_map_end);
    using Hook = void (*)(void**, unsigned*, unsigned);
    if (registered_unwind_tables) {
        note_registered_unwind_tables();
    }
    Hook hook = chosen_backtrace;
    return mallctl("experimental.hooks.prof_backtrace", nullptr, nullptr, &hook, sizeof(hook)) == 0;
}

} // namespace heapkit::agent
