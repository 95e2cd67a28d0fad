// SPDX-License-Identifier: MIT
// When the peak watcher captures: a new high-water mark (rate-limited, the held-back one
// taken when the window ends), danger (near the cgroup's limit, over an absolute size,
// memory pressure; once per crossing). Decisions only, from samples and a clock: the
// watcher does the capturing, tests drive this with made-up samples.
#pragma once

#include "heapkit/runtime/peaks/peak_sample.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace heapkit::runtime {

enum class Trigger { peak, danger, demand };
// "peak", "danger", "demand": the trigger's word in capture names and on /metrics.
std::string_view trigger_name(Trigger trigger);
std::optional<Trigger> trigger_from_name(std::string_view name);

struct TriggerOptions {
    bool watch_rss = false;     // the high-water mark of RSS instead of jemalloc's stats.allocated
    double growth_percent = 10; // a new peak: this much over the last captured one
    uint64_t floor_bytes = 16u << 20; // no peak capture below this (an idle process stays quiet)
    int64_t min_interval_ms = 10'000; // at most one peak capture per window
    double danger_fraction = 0.9;     // of the cgroup's limit (memory.high when lower); 0: off
    uint64_t danger_bytes = 0;        // RSS over this; 0: off
    double danger_psi = 0;            // memory pressure "some avg10" (%) over this; 0: off
};

class Triggers {
public:
    explicit Triggers(TriggerOptions options)
        : m_options(options) {}

    // What `sample`, taken at `now_ms` (a monotonic clock), calls for, if anything.
    std::optional<Trigger> decide(const MemorySample& sample, int64_t now_ms);
    // A capture of `trigger` was taken of `sample` at `now_ms`: the next peak must beat it.
    void captured(Trigger trigger, const MemorySample& sample, int64_t now_ms);

    // The value watched in `sample` (allocated or RSS).
    std::optional<uint64_t> watched(const MemorySample& sample) const;
    // True while danger holds (a capture was taken for this crossing).
    bool in_danger() const { return !m_danger_armed; }
    uint64_t last_peak() const { return m_last_peak; }

private:
    bool danger(const MemorySample& sample) const;

    TriggerOptions m_options;
    uint64_t m_last_peak = 0;
    std::optional<int64_t> m_last_peak_ms;
    bool m_held = false; // a peak the window held back
    bool m_danger_armed = true;
};

} // namespace heapkit::runtime
