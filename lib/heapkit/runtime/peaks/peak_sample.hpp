// SPDX-License-Identifier: MIT
// What the peak watcher looks at every interval, read cheaply: a few small files and three
// mallctl calls, no allocation on the way (a guest samples often).
#pragma once

#include "heapkit/runtime/mallctl.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace heapkit::runtime {

// Where this process's memory cgroup keeps its files, found once: cgroup v2's
// memory.current/max/high/events/pressure or v1's memory.usage_in_bytes/limit_in_bytes.
struct CgroupFiles {
    enum class Version { none, v1, v2 };
    Version version = Version::none;
    std::string directory; // "/sys/fs/cgroup/…", "" when none
};

// This process's memory cgroup from /proc/self/cgroup (v2 "0::/path" with a memory.current,
// else v1's "N:…memory…:/path"); none when neither is mounted where expected.
CgroupFiles find_memory_cgroup();

// One look, every value in bytes; a source that is not there stays nullopt.
struct MemorySample {
    std::optional<uint64_t> rss;              // /proc/self/statm's resident pages
    std::optional<uint64_t> allocated;        // jemalloc stats.allocated (after an epoch bump)
    std::optional<uint64_t> resident;         // jemalloc stats.resident
    std::optional<uint64_t> cgroup_usage;     // memory.current / memory.usage_in_bytes
    std::optional<uint64_t> cgroup_limit;     // memory.max / memory.limit_in_bytes; nullopt: none
    std::optional<uint64_t> cgroup_high;      // v2 memory.high; nullopt: none
    std::optional<uint64_t> cgroup_oom_kills; // v2 memory.events oom_kill
    std::optional<double> psi_some_avg10;     // memory.pressure or /proc/pressure/memory
};

// Reads all of it now. `mallctl` may be null (then no jemalloc figures).
MemorySample read_memory_sample(const Mallctl* mallctl, const CgroupFiles& cgroup);

// "some avg10=1.23 avg60=…" -> 1.23.
std::optional<double> parse_psi_some_avg10(std::string_view text);
// memory.events' "oom_kill N" -> N.
std::optional<uint64_t> parse_events_field(std::string_view text, std::string_view field);
// v1 reports "no limit" as a huge number (PAGE_COUNTER_MAX pages): over 2^60 is none.
std::optional<uint64_t> limit_or_none(std::optional<uint64_t> value);

} // namespace heapkit::runtime
