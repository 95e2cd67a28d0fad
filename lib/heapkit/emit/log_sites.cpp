// SPDX-License-Identifier: MIT
#include "heapkit/emit/log_sites.hpp"

#include "heapkit/emit/stacks/sample_stacks.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace heapkit {
namespace {

void add(LogSite& site, const Profile& profile, const Sample& sample, SampleType type) {
    site.heap.alloc_objects += sample.values.alloc_objects;
    site.heap.alloc_space += sample.values.alloc_space;
    site.ranked_by += value_of(profile, sample, type);
    if (sample.log >= profile.log_samples.size()) {
        return;
    }
    const LogSample& log = profile.log_samples[sample.log];
    site.log.temporary_objects += log.values.temporary_objects;
    site.log.temporary_space += log.values.temporary_space;
    site.log.byte_seconds += log.values.byte_seconds;
    site.log.cross_thread_objects += log.values.cross_thread_objects;
    site.log.cross_thread_space += log.values.cross_thread_space;
    site.lifetimes.insert(site.lifetimes.end(), log.lifetimes.begin(), log.lifetimes.end());
}

} // namespace

Result<std::vector<LogSite>> sites_of(const Profile& profile, const FoldedOptions& folded) {
    FoldedOptions every = folded; // a site with no value of the chosen type still has a row
    every.sample = SampleType::alloc_objects;
    HEAPKIT_TRY_ASSIGN(SampleStacks spelled, spell_sample_stacks(profile, every));
    std::map<std::string, LogSite> by_name;
    for (size_t s = 0; s < profile.samples.size(); ++s) {
        uint32_t stack = spelled.stack_of_sample[s];
        if (stack == SampleStacks::none) {
            continue;
        }
        std::string_view spelled_stack = spelled.stacks[stack];
        std::string_view leaf = leaf_of(spelled_stack);
        // With per-thread frames (--threads) each stack starts with its thread's name: a
        // site is then a thread's, "thread;site", as the folded stacks spell it.
        std::string key(leaf);
        if (folded.thread_frames && profile.samples[s].thread >= 0) {
            key = fmt::format("{};{}", spelled_stack.substr(0, spelled_stack.find(';')), leaf);
        }
        LogSite& site = by_name[key];
        if (site.name.empty()) {
            site.name = key;
        }
        add(site, profile, profile.samples[s], folded.sample);
    }
    std::vector<LogSite> sites;
    for (auto& [name, site] : by_name) {
        sites.push_back(std::move(site));
    }
    std::sort(sites.begin(), sites.end(), [](const LogSite& a, const LogSite& b) {
        return std::tie(b.ranked_by, b.heap.alloc_space, a.name) <
               std::tie(a.ranked_by, a.heap.alloc_space, b.name);
    });
    return sites;
}

} // namespace heapkit
