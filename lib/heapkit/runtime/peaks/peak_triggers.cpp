// SPDX-License-Identifier: MIT
#include "heapkit/runtime/peaks/peak_triggers.hpp"

#include <algorithm>
#include <cmath>

namespace heapkit::runtime {

std::string_view trigger_name(Trigger trigger) {
    switch (trigger) {
    case Trigger::peak:
        return "peak";
    case Trigger::danger:
        return "danger";
    case Trigger::demand:
        return "demand";
    }
    return "peak";
}

std::optional<Trigger> trigger_from_name(std::string_view name) {
    for (Trigger trigger : {Trigger::peak, Trigger::danger, Trigger::demand}) {
        if (trigger_name(trigger) == name) {
            return trigger;
        }
    }
    return std::nullopt;
}

std::optional<uint64_t> Triggers::watched(const MemorySample& sample) const {
    return m_options.watch_rss ? sample.rss : sample.allocated;
}

bool Triggers::danger(const MemorySample& sample) const {
    // memory.high throttles the cgroup's processes and reclaims hard: when it is set below
    // memory.max, it is the limit the process meets first.
    std::optional<uint64_t> limit = sample.cgroup_limit;
    if (sample.cgroup_high && (!limit || *sample.cgroup_high < *limit)) {
        limit = sample.cgroup_high;
    }
    if (m_options.danger_fraction > 0 && sample.cgroup_usage && limit &&
        static_cast<double>(*sample.cgroup_usage) >=
            m_options.danger_fraction * static_cast<double>(*limit)) {
        return true;
    }
    if (m_options.danger_bytes > 0 && sample.rss && *sample.rss >= m_options.danger_bytes) {
        return true;
    }
    return m_options.danger_psi > 0 && sample.psi_some_avg10 &&
           *sample.psi_some_avg10 >= m_options.danger_psi;
}

std::optional<Trigger> Triggers::decide(const MemorySample& sample, int64_t now_ms) {
    // Danger first and at once, once per crossing: it may be the last look before the
    // OOM killer's.
    if (danger(sample)) {
        if (m_danger_armed) {
            m_danger_armed = false;
            return Trigger::danger;
        }
    } else {
        m_danger_armed = true;
    }
    auto value = watched(sample);
    if (!value) {
        return std::nullopt;
    }
    bool window_open = !m_last_peak_ms || now_ms - *m_last_peak_ms >= m_options.min_interval_ms;
    double over = static_cast<double>(m_last_peak) * (1 + m_options.growth_percent / 100);
    bool new_peak = *value >= m_options.floor_bytes && static_cast<double>(*value) >= over;
    if (new_peak) {
        if (window_open) {
            return Trigger::peak;
        }
        m_held = true; // the climb goes on: taken at the window's end if still above
        return std::nullopt;
    }
    if (m_held && window_open) {
        m_held = false;
        if (*value > m_last_peak) {
            return Trigger::peak;
        }
    }
    return std::nullopt;
}

void Triggers::captured(Trigger trigger, const MemorySample& sample, int64_t now_ms) {
    auto value = watched(sample);
    if (trigger == Trigger::peak) {
        m_last_peak_ms = now_ms;
        m_held = false;
    }
    if (value) {
        m_last_peak = std::max(m_last_peak, *value);
    }
}

} // namespace heapkit::runtime
