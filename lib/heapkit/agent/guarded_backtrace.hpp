// SPDX-License-Identifier: MIT
// jemalloc's backtrace of a sampled allocation, replaced in the process the agent serves
// by one that stops at code no loaded object holds (JIT-compiled code).
#pragma once

#include <cstddef>

namespace heapkit::agent {

using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);

// When jemalloc unwinds its samples with libgcc (config.prof_libgcc, Debian's build),
// installs through "experimental.hooks.prof_backtrace" the same unwinder with one guard:
// a frame whose address lies in no loaded object (JIT code) is the last one taken.
// `registered_unwind_tables`: a JIT (LuaJIT) registers unwind tables with libgcc, whose
// lookups then take a lock: the frames are walked without libgcc (cfi_unwinder.hpp).
// Returns true when installed. Allocates nothing; needs only libc and the libgcc_s
// jemalloc already loaded.
bool install_guarded_backtrace(Mallctl mallctl, bool registered_unwind_tables);

// From now on the hook walks without libgcc: unwind tables were registered
// (__register_frame, which the loader sees first: shim.cpp). Async-signal-safe.
void note_registered_unwind_tables();

} // namespace heapkit::agent
