// SPDX-License-Identifier: MIT
// An allocation log becomes a Profile through build_profile: its stacks are written as a
// dump's would be (with the paired dump's map), so that modules, locations and the moving
// back of return addresses are the dumps' own; then each sample's values are replaced by
// the per-allocation sums the log allows.
#include "heapkit/model/log_profile.hpp"

#include "heapkit/model/build_profile.hpp"
#include "heapkit/unsample/unsample.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace heapkit {
namespace {

// A sample: a stack, and a thread when split by thread (else -1).
using SampleKey = std::pair<uint32_t, int64_t>;

// Sums in double precision, rounded once per sample (unsample.hpp's rule).
struct Sums {
    double objects = 0;
    double bytes = 0;
    double temporary_objects = 0;
    double temporary_bytes = 0;
    double byte_seconds = 0;
    double cross_objects = 0;
    double cross_bytes = 0;
    std::vector<Lifetime> lifetimes;

    void add(const LogAllocation& allocation, bool cross_thread, uint64_t period) {
        if (allocation.usize == 0) {
            lifetimes.push_back({allocation.lifetime_nanos(), 0});
            return;
        }
        double size = static_cast<double>(allocation.usize);
        double weight = unsample_scale(size, period);
        uint64_t lifetime = allocation.lifetime_nanos();
        objects += weight;
        bytes += weight * size;
        if (lifetime <= temporary_nanos) {
            temporary_objects += weight;
            temporary_bytes += weight * size;
        }
        byte_seconds += weight * size * (static_cast<double>(lifetime) / 1e9);
        if (cross_thread) {
            cross_objects += weight;
            cross_bytes += weight * size;
        }
        lifetimes.push_back({lifetime, weight});
    }

    HeapValues heap_values() const {
        return {round_saturating(objects), round_saturating(bytes), 0, 0};
    }

    LogSample log_sample() && {
        LogValues values{round_saturating(temporary_objects), round_saturating(temporary_bytes),
                         round_saturating(byte_seconds), round_saturating(cross_objects),
                         round_saturating(cross_bytes)};
        return {values, std::move(lifetimes)};
    }
};

std::string thread_label(const LogThread& thread) {
    return thread.name.empty() ? fmt::format("t{}", thread.uid) : thread.name;
}

// The log's start, as far as it can be known: jemalloc writes its duration (start to stop)
// and every free it records came before the stop, so the start is no earlier than the
// last free less the duration. An object allocated before that was allocated before the
// log began, whatever the clock's origin.
uint64_t earliest_start(const ProfLog& log) {
    uint64_t last_free = 0;
    for (const LogAllocation& allocation : log.allocations) {
        last_free = std::max(last_free, allocation.free_nanos);
    }
    return last_free > log.duration_nanos ? last_free - log.duration_nanos : 0;
}

std::string seconds_text(uint64_t nanos) {
    return fmt::format("{:.3g} s", static_cast<double>(nanos) / 1e9);
}

} // namespace

Profile build_log_profile(const ProfLog& log, const std::vector<MapEntry>& maps,
                          const LogBuildOptions& options) {
    std::map<SampleKey, Sums> sums;
    uint64_t period = log.sample_period();
    uint64_t start = earliest_start(log);
    size_t early = 0;
    uint64_t longest_early = 0;
    for (const LogAllocation& allocation : log.allocations) {
        // Born before the log: not allocated while it ran (allocs/s), and its lifetime,
        // however true, is one only the long-lived show (those born in the log that
        // outlive it are not recorded): left out, and said.
        if (allocation.alloc_nanos < start) {
            ++early;
            longest_early = std::max(longest_early, allocation.lifetime_nanos());
            continue;
        }
        uint32_t trace = options.by_free_site ? allocation.free_trace : allocation.alloc_trace;
        uint32_t thread = options.by_free_site ? allocation.free_thread : allocation.alloc_thread;
        bool cross =
            log.threads[allocation.alloc_thread].uid != log.threads[allocation.free_thread].uid;
        SampleKey key{trace, options.per_thread ? int64_t{thread} : -1};
        sums[key].add(allocation, cross, period);
    }
    // The stacks as a dump's, one per sample in the order of `sums`, with counts that no
    // rule of build_profile leaves out: sample i is then key i.
    RawDump dump;
    dump.source = log.source;
    dump.sample_period = period;
    dump.maps = maps;
    dump.has_maps = true;
    for (const auto& entry : sums) {
        dump.add_stack(log.traces[entry.first.first], SampledCounts{1, 1, 1, 1});
    }
    std::vector<RawDump> dumps;
    dumps.push_back(std::move(dump));
    Profile profile = build_profile(dumps, BuildOptions{});
    if (profile.samples.size() != sums.size()) {
        throw std::logic_error("build_log_profile: a stack of the log became no sample");
    }
    profile.from_log = true;
    profile.log_free_sites = options.by_free_site;
    profile.has_accum = true;
    profile.duration_nanos = static_cast<int64_t>(log.duration_nanos);
    if (early > 0) {
        profile.log_window_note = fmt::format(
            "{} of the log's {} records are of objects allocated before it began (freed while "
            "it ran, after living up to {}; the log ran {}): left out of every figure, which "
            "are of objects allocated and freed while it ran",
            early, log.allocations.size(), seconds_text(longest_early),
            seconds_text(log.duration_nanos));
        profile.notes.push_back(profile.log_window_note);
    }
    std::map<uint32_t, int32_t> labels; // log thread index -> Profile::thread_labels
    size_t s = 0;
    for (auto& [key, sum] : sums) {
        Sample& sample = profile.samples[s++];
        sample.values = sum.heap_values();
        sample.log = static_cast<uint32_t>(profile.log_samples.size());
        profile.log_samples.push_back(std::move(sum).log_sample());
        if (key.second >= 0) {
            auto index = static_cast<uint32_t>(key.second);
            auto [it, added] = labels.emplace(index, 0);
            if (added) {
                it->second = static_cast<int32_t>(profile.thread_labels.size());
                profile.thread_labels.push_back(thread_label(log.threads[index]));
            }
            sample.thread = it->second;
        }
    }
    return profile;
}

} // namespace heapkit
