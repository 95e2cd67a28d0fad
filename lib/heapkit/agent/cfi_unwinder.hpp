// SPDX-License-Identifier: MIT
// A stack walk that takes no lock: for jemalloc's sampled allocations in a host where
// libgcc's unwinder may already be running on the same thread. LuaJIT registers unwind
// tables for its traces (__register_frame); from then on libgcc's _Unwind_Find_FDE takes
// its object_mutex on every lookup, and sorts a registered table, calling malloc, with the
// mutex held. A sampled allocation there (kresd with lg_prof_sample:4, at start) asked
// libgcc's _Unwind_Backtrace for its stack, which waited for that mutex forever: the host
// hung, ignoring SIGTERM. This walk reads each frame's call frame information from its
// object's .eh_frame through .eh_frame_hdr's table, found with _dl_find_object (lock-free,
// async-signal-safe), and never calls libgcc. A frame in no loaded object (JIT code) ends
// the walk, as the guarded backtrace does (guarded_backtrace.cpp). x86-64 only; nothing
// but the C library, and no allocation.
#pragma once

#include <cstdint>

namespace heapkit::agent {

// True where this walk is built (x86-64).
bool cfi_unwinder_available();

// This thread's return addresses (runtime), from the caller of this function outwards,
// into `frames`, at most `capacity`; frames whose address lies in [skip_start, skip_end)
// (the caller's own library) are passed over. Stops after a frame that lies in no loaded
// object, where the call frame information ends (_start, a thread's start) or cannot be
// read. Returns how many were written.
unsigned unwind_this_stack(void** frames, unsigned capacity, uintptr_t skip_start,
                           uintptr_t skip_end);

} // namespace heapkit::agent
