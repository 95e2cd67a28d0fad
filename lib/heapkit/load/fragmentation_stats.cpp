// SPDX-License-Identifier: MIT
#include "heapkit/load/fragmentation_stats.hpp"

#include "heapkit/stats/fragmentation.hpp"
#include "heapkit/stats/jestat.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/try.hpp"

#include <string_view>
#include <unistd.h>

namespace heapkit {

std::string stats_of(std::span<const Input> inputs, const LoadOptions& options) {
    if (!options.stats.empty()) {
        return options.stats;
    }
    constexpr std::string_view heap = ".heap";
    bool wanted = options.sample_given && options.sample_name.starts_with("fragmentation_");
    if (!wanted || inputs.size() != 1 || inputs.front().bytes ||
        !inputs.front().name.ends_with(heap)) {
        return {};
    }
    const std::string& dump = inputs.front().name;
    std::string beside = dump.substr(0, dump.size() - heap.size()) + ".stats.json";
    return ::access(beside.c_str(), R_OK) == 0 ? beside : std::string();
}

Result<void> charge_fragmentation(Profile& profile, const std::string& stats_path,
                                  uint64_t max_inflated) {
    if (stats_path.empty()) {
        return {};
    }
    if (profile.sources.size() > 1) {
        return fail("--stats describes one moment: give the one heap dump written with it, "
                    "not {} and {}",
                    profile.sources[0], profile.sources[1]);
    }
    HEAPKIT_TRY_ASSIGN(InputText text, read_input(stats_path, max_inflated, "jemalloc statistics"));
    HEAPKIT_TRY_ASSIGN(stats::JemallocStats figures, stats::parse_stats(text.bytes, text.name));
    return stats::charge_fragmentation(profile, figures, text.name);
}

Error fragmentation_needs_stats(std::string_view sample_name) {
    return Error{fmt::format("{} is estimated from jemalloc's statistics of the dump's moment: "
                             "give them with --stats STATS.json (malloc_stats_print's \"J\" "
                             "output; a peak capture's STEM.stats.json beside STEM.heap is "
                             "found by itself)",
                             sample_name)};
}

} // namespace heapkit
