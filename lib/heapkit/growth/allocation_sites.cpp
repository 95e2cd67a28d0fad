// SPDX-License-Identifier: MIT
#include "heapkit/growth/allocation_sites.hpp"

#include "heapkit/emit/stacks/folded.hpp"
#include "heapkit/emit/stacks/sample_stacks.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <string_view>
#include <unordered_map>

namespace heapkit {
namespace {

// Which function_line stack each sample of `dump` has, per its function-style stack in
// `wanted`: the values of each pair summed. Both spellings come from the same samples, so
// a line-level stack belongs to exactly one function-level stack, found without parsing.
std::unordered_map<size_t, std::map<std::string, int64_t>>
sites_by_stack(const Profile& dump, const SampleStacks& plain, const SampleStacks& lined,
               const std::unordered_map<std::string_view, size_t>& wanted, SampleType sample) {
    std::unordered_map<size_t, std::map<std::string, int64_t>> sites;
    for (size_t s = 0; s < dump.samples.size(); ++s) {
        uint32_t p = plain.stack_of_sample[s];
        uint32_t l = lined.stack_of_sample[s];
        if (p == SampleStacks::none || l == SampleStacks::none) {
            continue;
        }
        auto it = wanted.find(plain.stacks[p]);
        if (it != wanted.end()) {
            sites[it->second][lined.stacks[l]] += value_of(dump.samples[s].values, sample);
        }
    }
    return sites;
}

std::vector<std::string_view> frames_of(std::string_view stack) {
    std::vector<std::string_view> frames;
    while (!stack.empty()) {
        size_t semicolon = stack.find(';');
        frames.push_back(stack.substr(0, semicolon));
        stack = semicolon == std::string_view::npos ? "" : stack.substr(semicolon + 1);
    }
    return frames;
}

// Stacks that allocate at one site, told apart: each site followed by the frame where its
// stack parts from the others', leaf upwards ("site via worker_loop"). The same pool grown
// from the main thread and from a worker read as one row twice, the stacks unshown.
void tell_apart(std::vector<std::string>& sites, std::span<const StackTrend> stacks) {
    std::map<std::string, std::vector<size_t>> by_site;
    for (size_t s = 0; s < sites.size(); ++s) {
        by_site[sites[s]].push_back(s);
    }
    for (const auto& [site, members] : by_site) {
        if (members.size() < 2) {
            continue;
        }
        for (size_t s : members) {
            std::vector<std::string_view> mine = frames_of(stacks[s].stack);
            size_t shared = 0; // frames from the leaf shared with the nearest other stack
            for (size_t t : members) {
                std::vector<std::string_view> theirs = frames_of(stacks[t].stack);
                size_t common = 0;
                while (t != s && common < mine.size() && common < theirs.size() &&
                       mine[mine.size() - 1 - common] == theirs[theirs.size() - 1 - common]) {
                    ++common;
                }
                shared = std::max(shared, common);
            }
            std::string_view parting =
                shared < mine.size() ? mine[mine.size() - 1 - shared] : mine.front();
            sites[s] = fmt::format("{} via {}", site, parting);
        }
    }
}

} // namespace

Result<std::vector<std::string>> allocation_sites(std::span<const Profile> dumps,
                                                  const FoldedOptions& folded,
                                                  std::span<const StackTrend> stacks) {
    std::vector<std::string> sites;
    for (const StackTrend& stack : stacks) {
        sites.emplace_back(leaf_of(stack.stack));
    }
    if (folded.style != FrameStyle::function) {
        tell_apart(sites, stacks);
        return sites; // lines are spelled already, or there are none to spell
    }
    return catching([&]() -> Result<std::vector<std::string>> {
        // Each dump spelled once, the newest first, for the stacks it is the last to hold.
        FoldedOptions with_lines = folded;
        with_lines.style = FrameStyle::function_line;
        for (size_t d = dumps.size(); d-- > 0;) {
            std::unordered_map<std::string_view, size_t> wanted;
            for (size_t s = 0; s < stacks.size(); ++s) {
                auto holds = [&](int64_t v) { return v != 0; };
                auto last = std::find_if(stacks[s].values.rbegin(), stacks[s].values.rend(), holds);
                if (last != stacks[s].values.rend() &&
                    static_cast<size_t>(stacks[s].values.rend() - last) - 1 == d) {
                    wanted.emplace(stacks[s].stack, s);
                }
            }
            if (wanted.empty()) {
                continue;
            }
            HEAPKIT_TRY_ASSIGN(SampleStacks plain, spell_sample_stacks(dumps[d], folded));
            HEAPKIT_TRY_ASSIGN(SampleStacks lined, spell_sample_stacks(dumps[d], with_lines));
            // Lines of one function part by line there: the site holding the most wins
            // (the first bytewise among equals).
            for (auto& [s, candidates] :
                 sites_by_stack(dumps[d], plain, lined, wanted, folded.sample)) {
                int64_t best = 0;
                for (const auto& [stack, value] : candidates) {
                    if (std::abs(value) > best) {
                        best = std::abs(value);
                        sites[s] = std::string(leaf_of(stack));
                    }
                }
            }
        }
        tell_apart(sites, stacks);
        return sites;
    });
}

} // namespace heapkit
