// SPDX-License-Identifier: MIT
#include "heapkit/stats/report_json.hpp"

#include <nlohmann/json.hpp>

namespace heapkit::stats {
namespace {

using nlohmann::json;

json rows_json(const std::vector<Row>& rows) {
    json list = json::array();
    for (const Row& row : rows) {
        list.push_back({{"key", row.key},
                        {"label", row.label},
                        {"bytes", row.bytes},
                        {"subtotal", row.subtotal},
                        {"what", row.what},
                        {"knob", row.knob}});
    }
    return list;
}

json jemalloc_json(const JemallocStats& stats) {
    return {{"version", stats.version},
            {"format", stats.format},
            {"page", stats.page},
            {"narenas", stats.narenas},
            {"arenas_in_use", stats.arenas_in_use},
            {"background_thread", stats.background_thread},
            {"retain", stats.retain},
            {"tcache", stats.tcache},
            {"tcache_max", stats.tcache_max},
            {"dirty_decay_ms", stats.dirty_decay_ms},
            {"muzzy_decay_ms", stats.muzzy_decay_ms},
            {"printed_at_exit", stats.printed_at_exit},
            {"allocated", stats.allocated},
            {"active", stats.active},
            {"metadata", stats.metadata},
            {"resident", stats.resident},
            {"mapped", stats.mapped},
            {"retained", stats.retained},
            {"tcache_bytes", stats.merged.tcache_bytes},
            {"pdirty", stats.merged.pdirty},
            {"pmuzzy", stats.merged.pmuzzy},
            {"threads", stats.merged.threads},
            {"lg_prof_sample", stats.lg_prof_sample},
            {"arena_slab_waste", stats.arena_slab_waste}};
}

} // namespace

std::string report_json(const Reconciliation& report, std::string_view stats_source) {
    json bins = json::array();
    for (const WastedBin& wasted : report.worst_bins) {
        bins.push_back({{"size", wasted.bin.size},
                        {"curregs", wasted.bin.curregs},
                        {"curslabs", wasted.bin.curslabs},
                        {"regions_per_slab", wasted.bin.regions},
                        {"slab_size", wasted.bin.slab_size},
                        {"utilization", wasted.utilization},
                        {"wasted", wasted.wasted}});
    }
    json out = {{"source", stats_source},
                {"jemalloc", jemalloc_json(report.stats)},
                {"profile_inuse", report.profile ? json(report.profile->inuse) : json()},
                {"profile_sampled_small_objects",
                 report.profile ? json(report.profile->sampled_small_objects) : json()},
                {"allocator", rows_json(report.allocator)},
                {"rss", rows_json(report.rss)},
                {"slab_waste", report.slab_waste},
                {"worst_bins", bins},
                {"per_stack_command",
                 report.per_stack_command.empty() ? json() : json(report.per_stack_command)}};
    if (report.resident) {
        out["smaps"] = {{"rss", report.resident->rss},
                        {"anonymous", report.resident->anonymous},
                        {"file", report.resident->file},
                        {"stacks", report.resident->stacks},
                        {"per_mapping", report.resident->per_mapping}};
    }
    // Replace: a version string from a damaged print may hold bytes that are not UTF-8.
    return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

} // namespace heapkit::stats
