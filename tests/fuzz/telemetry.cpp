// SPDX-License-Identifier: MIT
// Any bytes as the /proc and cgroup v2 files the runtime's telemetry reads
// (/proc/self/smaps_rollup, memory.stat, memory.current or memory.max, /proc/self/cgroup)
// and the peak watcher reads (a pressure file's "some avg10", memory.events' fields):
// each of its parsers gets the same input; the kernel writes them, but a container may
// mount anything there.
#include "heapkit/runtime/telemetry.hpp"

#include "heapkit/runtime/peaks/peak_sample.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    heapkit::runtime::MemoryTelemetry telemetry;
    telemetry.smaps_rollup = heapkit::runtime::parse_smaps_rollup(text);
    telemetry.cgroup = heapkit::runtime::parse_memory_stat(text);
    if (auto value = heapkit::runtime::parse_memory_value(text)) {
        telemetry.cgroup["memory.current"] = *value;
    }
    static_cast<void>(heapkit::runtime::cgroup_v2_path(text));
    static_cast<void>(heapkit::runtime::to_prometheus(telemetry));
    static_cast<void>(heapkit::runtime::parse_psi_some_avg10(text));
    static_cast<void>(heapkit::runtime::parse_events_field(text, "oom_kill"));
    return 0;
}
