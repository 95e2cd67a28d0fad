// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/runtime/mallctl.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace heapkit::runtime {

// Memory figures of this process, every value in bytes. A source that is not there
// (no jemalloc, no cgroup v2, an old kernel) leaves its map empty.
struct MemoryTelemetry {
    std::map<std::string, uint64_t> jemalloc;     // stats.allocated, active, resident, ...
    std::map<std::string, uint64_t> smaps_rollup; // Rss, Pss, Pss_Anon, Anonymous, Swap, ...
    std::map<std::string, uint64_t> cgroup;       // memory.current, memory.max, anon, file, ...
};

// Reads all three now: jemalloc's stats after an "epoch" refresh (when `mallctl` is
// given), /proc/self/smaps_rollup, and this process's cgroup v2 memory files.
MemoryTelemetry read_telemetry(const Mallctl* mallctl);

// "Rss:   1234 kB" lines -> {"Rss": 1263616}.
std::map<std::string, uint64_t> parse_smaps_rollup(std::string_view text);
// memory.stat's "anon 123" lines, only the fields worth exporting.
std::map<std::string, uint64_t> parse_memory_stat(std::string_view text);
// memory.current / memory.max: a number, or nullopt for "max" and garbage.
std::optional<uint64_t> parse_memory_value(std::string_view text);
// The cgroup v2 path of this process from /proc/self/cgroup text ("0::/path").
std::optional<std::string> cgroup_v2_path(std::string_view proc_self_cgroup);

// Prometheus text exposition (version 0.0.4) of the telemetry.
std::string to_prometheus(const MemoryTelemetry& telemetry);

} // namespace heapkit::runtime
