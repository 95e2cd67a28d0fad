// SPDX-License-Identifier: MIT
// Unwinds the stack snapshots a CPU profile's signal handler took, on the profiler's own
// thread, with elfutils' libdwfl over this process's modules (their .eh_frame; no debug
// file is looked for). Memory is read from the snapshot only: a frame whose unwind
// information points outside it ends the stack rather than reading live memory.
#pragma once

#include "heapkit/runtime/cpu/stack_snapshot.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace heapkit::runtime {

class SnapshotUnwinder {
public:
    // Reports the modules mapped now (/proc/self/maps, and the vDSO where it is mapped:
    // both still readable after the process drops privileges). Null when libdwfl cannot
    // start or the maps cannot be read.
    static std::unique_ptr<SnapshotUnwinder> for_this_process();
    ~SnapshotUnwinder();
    SnapshotUnwinder(const SnapshotUnwinder&) = delete;
    SnapshotUnwinder& operator=(const SnapshotUnwinder&) = delete;

    // Appends the snapshot's stack, leaf first (the interrupted pc, then return
    // addresses; runtime addresses), at most `max_depth` frames; returns how many.
    uint32_t unwind(const StackSnapshot& snapshot, std::vector<uint64_t>& pcs, size_t max_depth);

    struct State; // libdwfl's session and the snapshot being unwound

private:
    explicit SnapshotUnwinder(std::unique_ptr<State> state);
    std::unique_ptr<State> m_state;
};

} // namespace heapkit::runtime
