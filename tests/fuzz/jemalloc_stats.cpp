// SPDX-License-Identifier: MIT
// Any bytes as malloc_stats_print output (JSON or text, as jestat tells them apart), as
// /proc/PID/smaps, and through the reconciliation and its three writers when they parse.
#include "heapkit/stats/jestat.hpp"
#include "heapkit/stats/smaps.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto resident = heapkit::stats::parse_smaps(text, "fuzz");
    if (resident && resident->file > resident->rss) {
        __builtin_trap(); // file-backed is a part of Rss
    }
    auto stats = heapkit::stats::parse_stats(text, "fuzz");
    if (!stats) {
        return 0;
    }
    heapkit::stats::ProfileFigures profile;
    profile.inuse = 1000;
    profile.sampled_small_objects = 2;
    profile.sampled_small_bytes = 96;
    profile.sample_period = 1u << 19;
    auto report = heapkit::stats::reconcile(*stats, profile, std::nullopt);
    for (auto format : {heapkit::stats::ReportFormat::text, heapkit::stats::ReportFormat::json,
                        heapkit::stats::ReportFormat::svg}) {
        if (heapkit::stats::render(report, format, "fuzz").empty()) {
            __builtin_trap();
        }
    }
    return 0;
}
