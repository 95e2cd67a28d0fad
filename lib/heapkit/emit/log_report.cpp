// SPDX-License-Identifier: MIT
// write_log_report (writers.hpp): an allocation log's table, one row per site. A site is
// the leaf of a sample's stack as every other view spells it (allocator frames cut, the
// same names), so the table's rows are the flame graph's leaves.
#include "heapkit/emit/log_sites.hpp"
#include "heapkit/emit/quantity.hpp"
#include "heapkit/emit/writers.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>

namespace heapkit {
namespace {

// Lifetimes weighed by what each allocation stands for: the smallest lifetime that
// `share` of the weight does not exceed.
uint64_t percentile(const std::vector<Lifetime>& sorted, double total, double share) {
    double sum = 0;
    for (const Lifetime& lifetime : sorted) {
        sum += lifetime.weight;
        if (sum >= share * total) {
            return lifetime.nanos;
        }
    }
    return sorted.empty() ? 0 : sorted.back().nanos;
}

std::string duration(uint64_t nanos) {
    auto value = static_cast<double>(nanos);
    if (nanos < 1000) {
        return fmt::format("{}ns", nanos);
    }
    if (nanos < 1'000'000) {
        return fmt::format("{:.1f}us", value / 1e3);
    }
    if (nanos < 1'000'000'000) {
        return fmt::format("{:.1f}ms", value / 1e6);
    }
    return fmt::format("{:.2f}s", value / 1e9);
}

std::string share(double part, double total) {
    return total > 0 ? fmt::format("{:.1f}%", 100 * part / total) : "-";
}

std::string row(LogSite& site, double seconds) {
    std::vector<Lifetime>& lifetimes = site.lifetimes;
    std::sort(lifetimes.begin(), lifetimes.end(),
              [](const Lifetime& a, const Lifetime& b) { return a.nanos < b.nanos; });
    double total = 0;
    double within[3] = {0, 0, 0};
    constexpr uint64_t limits[3] = {1'000'000, 10'000'000, 1'000'000'000};
    for (const Lifetime& lifetime : lifetimes) {
        total += lifetime.weight;
        for (size_t i = 0; i < 3; ++i) {
            within[i] += lifetime.nanos <= limits[i] ? lifetime.weight : 0;
        }
    }
    auto per_second = [&](int64_t value, bool bytes) {
        return seconds > 0 ? quantity(static_cast<double>(value) / seconds, bytes) : "-";
    };
    return fmt::format(
        "{:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>6} {:>6} {:>6} {:>10} {:>6}  {}\n",
        per_second(site.heap.alloc_objects, false), per_second(site.heap.alloc_space, true),
        duration(percentile(lifetimes, total, 0.5)), duration(percentile(lifetimes, total, 0.9)),
        duration(percentile(lifetimes, total, 0.99)),
        duration(lifetimes.empty() ? 0 : lifetimes.back().nanos), share(within[0], total),
        share(within[1], total), share(within[2], total),
        with_thousands(static_cast<uint64_t>(std::max<int64_t>(0, site.log.byte_seconds))),
        share(static_cast<double>(site.log.cross_thread_objects),
              static_cast<double>(site.heap.alloc_objects)),
        site.name);
}

} // namespace

Result<void> write_log_report(const Profile& profile, const FoldedOptions& folded,
                              const TextOptions& options, const Sink& sink) {
    return catching([&]() -> Result<void> {
        HEAPKIT_TRY_ASSIGN(std::vector<LogSite> sites, sites_of(profile, folded));
        double seconds = static_cast<double>(profile.duration_nanos) / 1e9;
        int64_t objects = 0;
        int64_t bytes = 0;
        for (const LogSite& site : sites) {
            objects += site.heap.alloc_objects;
            bytes += site.heap.alloc_space;
        }
        size_t shown =
            options.node_count == 0 ? sites.size() : std::min(options.node_count, sites.size());
        std::string out = fmt::format(
            "allocation log: {} objects ({}) allocated and freed in {:.3f}s, unsampled; "
            "per {} site by {}, {} of {} sites shown\n",
            with_thousands(static_cast<uint64_t>(objects)), quantity(bytes, true), seconds,
            profile.log_free_sites ? "freeing" : "allocating", name_of(folded), shown,
            sites.size());
        out += fmt::format(
            "{:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>6} {:>6} {:>6} {:>10} {:>6}  {}\n",
            profile.log_free_sites ? "frees/s" : "allocs/s", "bytes/s", "life_p50", "life_p90",
            "life_p99", "life_max", "<=1ms", "<=10ms", "<=1s", "byte_secs", "xthr", "site");
        for (size_t s = 0; s < shown; ++s) {
            out += row(sites[s], seconds);
        }
        if (!profile.log_window_note.empty()) {
            out += fmt::format("note: {}\n", profile.log_window_note);
        }
        return sink(out);
    });
}

} // namespace heapkit
