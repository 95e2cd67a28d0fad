// SPDX-License-Identifier: MIT
// load_profile's path for jemalloc's allocation log: the log given with a heap dump of the
// same process, whose MAPPED_LIBRARIES place the log's addresses (the log has no map).
#include "heapkit/load/load_log.hpp"

#include "heapkit/model/log_profile.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <unordered_set>

namespace heapkit {
namespace {

// The process a dump comes from, as far as its file name tells: jemalloc puts the pid in
// every name it makes, and nothing in a dump's text.
Result<void> check_same_process(const ProfLog& log, const RawDump& dump, LoadReport& report) {
    std::optional<int64_t> dump_pid = pid_in_file_name(dump.source);
    if (!dump_pid) {
        report.warnings.push_back(fmt::format(
            "{}: its name is not one jemalloc makes (<prefix>.<pid>.<seq>.<kind>.heap), so it "
            "does not tell which process wrote it: its memory map is taken for {} (pid {}), "
            "whose addresses it places",
            dump.source, log.source, log.pid));
        return {};
    }
    if (*dump_pid != log.pid) {
        return fail("{} is the allocation log of pid {}, but {} is a dump of pid {}: its "
                    "memory map would place the log's addresses in another process's "
                    "libraries; give a dump the same process wrote (prof_final:true writes "
                    "one at exit, prof.dump one on demand)",
                    log.source, log.pid, dump.source, *dump_pid);
    }
    return {};
}

// A dump of another process, whatever its name: most of the log's addresses lie in none
// of its code mappings (another run of the program has its code elsewhere: ASLR). Named
// freely, such a dump made one site "0x7f92bcaa2630" of a whole log.
Result<void> check_addresses_mapped(const ProfLog& log, const RawDump& dump) {
    std::vector<std::pair<uint64_t, uint64_t>> code; // runtime [start, end)
    for (const MapEntry& entry : dump.maps) {
        if (entry.executable && entry.end > entry.start) {
            code.emplace_back(entry.start, entry.end);
        }
    }
    std::sort(code.begin(), code.end());
    auto mapped = [&code](uint64_t address) {
        auto after = std::upper_bound(code.begin(), code.end(),
                                      std::pair(address, std::numeric_limits<uint64_t>::max()));
        return after != code.begin() && address < std::prev(after)->second;
    };
    std::unordered_set<uint64_t> seen;
    size_t outside = 0;
    for (const std::vector<uint64_t>& trace : log.traces) {
        for (uint64_t address : trace) {
            if (seen.insert(address).second && !mapped(address)) {
                ++outside;
            }
        }
    }
    if (outside * 2 > seen.size()) {
        return fail("{}: {} of its {} addresses lie in no code mapping of {}: the dump is of "
                    "another process than the log's (pid {}); give a dump the same process "
                    "wrote (prof_final:true writes one at exit, prof.dump one on demand)",
                    log.source, outside, seen.size(), dump.source, log.pid);
    }
    return {};
}

} // namespace

Result<Profile> load_log_profile(ProfLog log, std::vector<RawDump> dumps,
                                 const LoadOptions& options, LoadReport& report) {
    if (dumps.size() != 1) {
        return fail("{}: an allocation log carries no memory map: give one heap dump of the "
                    "same process beside it (e.g. {}.{}.0.f.heap from prof_final:true){}; a series "
                    "(--growth) takes no log",
                    log.source, "jeprof", log.pid,
                    dumps.empty() ? "" : fmt::format(", not {}", dumps.size()));
    }
    const RawDump& dump = dumps.front();
    if (!dump.has_maps) {
        return fail("{}: the dump has no MAPPED_LIBRARIES section to place {}'s addresses",
                    dump.source, log.source);
    }
    if (log.allocations.empty()) {
        return fail("{}: the log holds no allocations. jemalloc logs a sampled allocation "
                    "when it is freed while the log runs (one per 2^{} bytes allocated here), "
                    "and only by a thread that has allocated itself: log longer, under load, or "
                    "with a smaller lg_prof_sample",
                    log.source, log.lg_sample_rate);
    }
    HEAPKIT_TRY(check_same_process(log, dump, report));
    HEAPKIT_TRY(check_addresses_mapped(log, dump));
    if (log.time_resolution != "high") {
        report.warnings.push_back(fmt::format(
            "{}: timestamps at prof_time_resolution:{} are the coarse clock's (a few ms): "
            "lifetimes and temporary_* (freed within 1 ms) need prof_time_resolution:high",
            log.source, log.time_resolution));
    }
    return build_log_profile(log, dump.maps,
                             LogBuildOptions{options.per_thread, options.log_free_sites});
}

} // namespace heapkit
