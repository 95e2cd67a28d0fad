// SPDX-License-Identifier: MIT
#include "heapkit/runtime/guest/threads.hpp"

#include "heapkit/runtime/profiler.hpp"

#include <csignal>
#include <pthread.h>

namespace heapkit::runtime {

// (prof.thread_active_init does not do it: jemalloc reads it at a thread's first sample,
// after the thread is made.) A guest thread also takes arena 0 without a thread cache, so
// that the server makes no arena of its own in the host (Profiler::make_thread_a_guest).
// No thread_local to remember it: in a dlopened library (the agent's core) a
// thread_local's first use allocates through __tls_get_addr, sampled, before sampling is
// off, and the host's profile then holds the agent's stack. A mallctl read instead.
void stop_sampling_this_thread() {
    if (auto profiler = Profiler::of_own_allocations()) {
        if (auto active = profiler->thread_active(); !active || *active) {
            static_cast<void>(profiler->make_thread_a_guest());
        }
    }
}

std::thread start_guest_thread(const char* name, std::function<void()> work) {
    // A new thread inherits the mask of the one that makes it: block all, make, restore.
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    std::thread thread([name, work = std::move(work)] {
        stop_sampling_this_thread();
        pthread_setname_np(pthread_self(), name);
        work();
    });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return thread;
}

} // namespace heapkit::runtime
