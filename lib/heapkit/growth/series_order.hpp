// SPDX-License-Identifier: MIT
// The order of a series of dumps and where one process's dumps end and the next one's
// begin: from the dumps' modification times and jemalloc's file names.
#pragma once

#include "heapkit/model/profile.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {

// What jemalloc's name for a dump says: <prefix>.<pid>.<seq>.<kind><n>.heap, where seq
// counts every dump of the process and kind is i (prof_interval), m (prof.dump), u
// (prof_gdump) or f (prof_final) with n counting that kind's dumps (none for f).
struct DumpName {
    uint64_t pid = 0;
    uint64_t seq = 0;
    std::string kind;   // "f", "i3", "m0", "u1" (or the peak watcher's "peak", ...)
    std::string prefix; // the file name before ".<pid>", without its directory
};

// The pid and sequence number of a path named as jemalloc names dumps (".gz" allowed
// after ".heap"), else nullopt.
std::optional<DumpName> parse_dump_name(std::string_view path);

// One loaded dump's place in time: its file's modification time (0 when unknown), its
// name, and the load address of its main executable (which ASLR moves from run to run).
struct DumpStamp {
    int64_t time_nanos = 0;
    std::optional<DumpName> name;
    std::optional<uint64_t> main_start; // runtime address
};

// The stamp of a profile loaded from one dump.
DumpStamp stamp_of(const Profile& dump);

// Indexes of `stamps` oldest first: by modification time; ties between processes broken
// by which process began first, within one by jemalloc's sequence number, then by the
// order given. When some dump's time is unknown (standard input, memory), the order given.
std::vector<size_t> series_order(std::span<const DumpStamp> stamps);

// Where runs begin in `ordered` (stamps oldest first), and its size last: a new run begins
// where the pid in the file names changes, or the main executable's load address does.
std::vector<size_t> run_bounds(std::span<const DumpStamp> ordered);

// A process that comes back after another one's dumps (runs that interleave in time): the
// processes ran at the same time (varnish's manager and child, a server's workers), and
// one series cannot be made of them. Per such process, in the order it first appears:
// its pid (or the load address of its main executable, when no file name tells) and
// the indexes into `ordered` of its dumps. Empty when runs follow one another.
struct ConcurrentProcess {
    std::optional<uint64_t> pid;
    uint64_t main_start = 0; // when no pid
    std::vector<size_t> dumps;
};
std::vector<ConcurrentProcess> concurrent_processes(std::span<const DumpStamp> ordered,
                                                    std::span<const size_t> bounds);

} // namespace heapkit
