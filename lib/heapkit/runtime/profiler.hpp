// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/runtime/mallctl.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace heapkit::runtime {

// jemalloc's heap profiler in this process, through mallctl.
class Profiler {
public:
    explicit Profiler(Mallctl mallctl)
        : m_mallctl(std::move(mallctl)) {}
    // The profiler of the copy of jemalloc that holds the program's heap
    // (Mallctl::find); fails when there is none. Profiling itself may still be off
    // (enabled()).
    static Result<Profiler> find();
    // The profiler of the copy `which` names (a page's ?jemalloc=); empty: find().
    static Result<Profiler> find(std::string_view which);
    // The profiler of the copy this process's malloc is (the runtime's own allocations go
    // there): where a guest turns its sampling off. None when malloc is not jemalloc's.
    static std::optional<Profiler> of_own_allocations();

    const Mallctl& mallctl() const { return m_mallctl; }

    // opt.prof: the process was started with profiling compiled in and turned on.
    Result<bool> enabled() const;
    // An error for the user when profiling cannot be used now (not enabled or not active).
    Result<void> require_active() const;

    Result<bool> active() const; // prof.active
    Result<void> set_active(bool active) const;
    Result<bool> thread_active() const; // thread.prof.active, the calling thread
    Result<void> set_thread_active(bool active) const;
    // The calling thread as a guest's: its allocations are not sampled (thread.prof.active
    // off), and it takes them from arena 0 (thread.arena), so that it creates no arena of
    // its own in the host (an arena's metadata costs hundreds of kB of RSS, and the host's
    // statistics would count one arena more), without a thread cache (thread.tcache.
    // enabled off): idle threads never flush theirs, and the server's three held about
    // 0.9 MB of the pages they had served with, in an idle host, for good. What they free
    // now goes back to the arena, which purges it at rest (the gauges still hold still
    // between scrapes: agent_prometheus). For the server's threads and the agent's; the
    // first that fails is the error, the others still tried.
    Result<void> make_thread_a_guest() const;
    Result<bool> thread_active_init() const; // prof.thread_active_init, for new threads
    Result<void> set_thread_active_init(bool active) const;
    Result<std::string> thread_name() const; // thread.prof.name
    Result<void> set_thread_name(const std::string& name) const;
    Result<size_t> lg_sample() const; // prof.lg_sample
    // prof.reset: forget all samples, and optionally change lg_prof_sample.
    Result<void> reset(std::optional<size_t> lg_sample) const;

    // The raw heap_v2 dump (prof.dump) as bytes: written into a memfd, so no writable
    // directory is needed; a temporary file under $TMPDIR (or /tmp) is the fallback.
    // Dumps are serialized: one at a time per process. Refused while profiling is not
    // active (require_active), unless the caller has checked already: a page judges its
    // request once, as it arrives, so that prof.active switched meanwhile by another client
    // (POST /pprof/conf) cannot turn a request that was fine into a server error.
    enum class Check { active, done_by_caller };
    Result<std::string> dump(Check check = Check::active) const;

private:
    Mallctl m_mallctl;
};

} // namespace heapkit::runtime
