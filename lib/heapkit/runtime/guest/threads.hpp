// SPDX-License-Identifier: MIT
// How every thread of the runtime and the agent starts (the server's loop, workers and
// waiting pages, the peak watcher, the agent's): a guest's threads must not take the
// host's signals, nor put their own allocations in the heap profile they serve.
#pragma once

#include <functional>
#include <thread>

namespace heapkit::runtime {

// jemalloc's sampling off for the calling thread, which becomes a guest of the host's
// allocator (Profiler::make_thread_a_guest: arena 0, no thread cache), once.
void stop_sampling_this_thread();

// A thread named `name` (15 characters at most) with every signal blocked, which stops
// sampling before it runs `work`. The caller's signal mask is left as it was.
std::thread start_guest_thread(const char* name, std::function<void()> work);

} // namespace heapkit::runtime
