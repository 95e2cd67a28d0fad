// SPDX-License-Identifier: MIT
#include "heapkit/load/unnamed_share.hpp"

#include "heapkit/symbolize/module_report.hpp"

#include <algorithm>
#include <unordered_map>

namespace heapkit {
namespace {

std::string_view share_unit(SampleType sample) {
    switch (sample) {
    case SampleType::inuse_space:
        return "bytes in use";
    case SampleType::inuse_objects:
        return "objects in use";
    case SampleType::alloc_space:
        return "bytes allocated";
    case SampleType::alloc_objects:
        return "objects allocated";
    default:
        return "profile's values";
    }
}

// For each location, the reports (indexes into `modules`) that list it as unnamed.
std::vector<std::vector<uint32_t>> unnamed_reports(const Profile& profile,
                                                   const std::vector<ModuleReport>& modules) {
    std::unordered_multimap<std::string_view, uint32_t> by_path;
    for (uint32_t i = 0; i < modules.size(); ++i) {
        if (!modules[i].unnamed.empty()) {
            by_path.emplace(modules[i].path, i);
        }
    }
    std::vector<std::vector<uint32_t>> reports(profile.locations.size());
    for (size_t i = 0; i < profile.locations.size() && !by_path.empty(); ++i) {
        const Location& location = profile.locations[i];
        if (location.module >= profile.modules.size()) {
            continue;
        }
        const Module& module = profile.modules[location.module];
        uint64_t offset = module.file_offset_of(location.address);
        auto [first, last] = by_path.equal_range(module.path);
        for (auto it = first; it != last; ++it) {
            const std::vector<uint64_t>& unnamed = modules[it->second].unnamed;
            if (std::binary_search(unnamed.begin(), unnamed.end(), offset)) {
                reports[i].push_back(it->second);
            }
        }
    }
    return reports;
}

} // namespace

void measure_unnamed(const Profile& profile, SampleType sample, LoadReport& report) {
    std::vector<ModuleReport>& modules = report.modules;
    std::vector<std::vector<uint32_t>> reports = unnamed_reports(profile, modules);
    std::vector<size_t> counted_in(modules.size(), SIZE_MAX); // the last sample counted
    for (ModuleReport& module : modules) {
        module.unnamed_value = 0;
    }
    report.share = UnnamedShare{};
    report.share.what = std::string(share_unit(sample));
    for (size_t s = 0; s < profile.samples.size(); ++s) {
        const Sample& each = profile.samples[s];
        int64_t value = std::max<int64_t>(value_of(profile, each, sample), 0);
        report.share.total += value;
        bool without_debug = false;
        for (uint32_t location : profile.locations_of(each)) {
            for (uint32_t r : reports[location]) {
                if (counted_in[r] != s) {
                    counted_in[r] = s;
                    modules[r].unnamed_value += value;
                    without_debug = without_debug || lacks_debug_info(modules[r]);
                }
            }
        }
        report.share.without_debug += without_debug ? value : 0;
    }
}

} // namespace heapkit
