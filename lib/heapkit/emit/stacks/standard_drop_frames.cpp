// SPDX-License-Identifier: MIT
// standard_drop_frames (standard_frames.hpp): what pprof's drop_frames must name so that
// pprof cuts the standard library's frames where the other views do.
#include "heapkit/emit/stacks/allocator_frames.hpp"
#include "heapkit/emit/stacks/clone_names.hpp"
#include "heapkit/emit/stacks/location_frames.hpp"
#include "heapkit/emit/stacks/standard_frames.hpp"
#include "heapkit/util/regex.hpp"

#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace heapkit {
namespace {

constexpr uint8_t cut = 1;  // cut at some stack's leaf end
constexpr uint8_t kept = 2; // kept in some stack

// Each simplified name's fates over every stack: a location frame's fate is marked once
// per stack through it (a set per stack frame was most of the time of a million samples),
// then gathered by name, as pprof matches them.
std::unordered_map<std::string_view, uint8_t> fates_by_name(const Profile& profile,
                                                            const FrameOptions& frames) {
    FoldedOptions options;
    options.frames = frames;
    options.style = FrameStyle::function; // a token per frame of a named location
    LocationTokens layout = location_kinds(profile, options);
    std::vector<uint8_t> fate(layout.entries(), 0);
    for (const Sample& sample : profile.samples) {
        std::span<const uint32_t> locations = profile.locations_of(sample);
        StackCut stack = stack_cut(profile, layout, locations, false);
        uint32_t position = 0; // leaf first, as stack_cut counts
        for (uint32_t location : locations) {
            for (uint32_t t = layout.first_of(location); t < layout.end_of(location); ++t) {
                if (position >= stack.allocator + stack.standard) {
                    fate[t] |= kept;
                } else if (position >= stack.allocator) {
                    fate[t] |= cut;
                }
                ++position;
            }
        }
    }
    std::unordered_map<std::string_view, uint8_t> names;
    for (uint32_t l = 0; l < profile.locations.size(); ++l) {
        const Location& location = profile.locations[l];
        for (size_t f = 0; f < location.frames.size(); ++f) {
            std::string_view name = location.frames[f].name;
            name =
                simplified_function_name(frames.merge_clones ? without_clone_suffixes(name) : name);
            names[name] |= fate[layout.first_of(l) + f];
        }
    }
    return names;
}

// `name` as a regex whose template argument lists (outside other brackets) match any:
// "std::vector<int, std::allocator<int> >::resize" -> "std::vector<.*>::resize". A C++
// program's thousands of instantiations of one container's growth path are one pattern
// (a program of 1500 instantiations gave 10645 names, 5.4 MB of regex). Names of the
// operators spelled with angle brackets (operator<<, operator->) stay literal.
std::string generalized(std::string_view name) {
    for (std::string_view bracket : {"operator<", "operator>", "operator->"}) {
        if (name.find(bracket) != std::string_view::npos) {
            return regex_literal(name);
        }
    }
    std::string pattern;
    int depth = 0;
    size_t literal_from = 0;
    for (size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '<' && depth++ == 0) {
            pattern += regex_literal(name.substr(literal_from, i - literal_from)) + "<.*>";
        } else if (name[i] == '>' && depth > 0 && --depth == 0) {
            literal_from = i + 1;
        }
    }
    return depth == 0 ? pattern + regex_literal(name.substr(literal_from)) : regex_literal(name);
}

// One regex of `patterns` (not empty), matched whole; escaped names and "<.*>" compile.
Result<Regex> alternation(const std::set<std::string>& patterns) {
    std::string joined;
    for (const std::string& pattern : patterns) {
        joined += joined.empty() ? "(?:" : "|";
        joined += pattern;
    }
    return Regex::compile(joined + ")");
}

// The patterns of `by_pattern` that match a name some stack keeps: pprof would cut that
// stack there.
std::set<std::string>
refused_patterns(const std::unordered_map<std::string_view, uint8_t>& names,
                 const std::map<std::string, std::vector<std::string_view>>& by_pattern) {
    std::set<std::string> patterns;
    for (const auto& [pattern, _] : by_pattern) {
        patterns.insert(pattern);
    }
    auto any = alternation(patterns);
    if (!any) {
        return patterns;
    }
    std::map<std::string, Result<Regex>> each; // compiled when a kept name matches
    std::set<std::string> refused;
    for (const auto& [name, fates] : names) {
        if ((fates & kept) == 0 || !any->full_match(name)) {
            continue;
        }
        for (const std::string& pattern : patterns) {
            auto it = each.try_emplace(pattern, alternation({pattern})).first;
            if (!it->second || it->second->full_match(name)) {
                refused.insert(pattern);
            }
        }
    }
    return refused;
}

} // namespace

std::string standard_drop_frames(const Profile& profile, const FrameOptions& frames) {
    if (frames.keep_allocator_frames) {
        return {};
    }
    std::unordered_map<std::string_view, uint8_t> names = fates_by_name(profile, frames);
    std::map<std::string, std::vector<std::string_view>> by_pattern; // the cut names of each
    for (const auto& [name, fates] : names) {
        if (fates == cut) {
            by_pattern[generalized(name)].push_back(name);
        }
    }
    if (by_pattern.empty()) {
        return {};
    }
    std::set<std::string> refused = refused_patterns(names, by_pattern);
    std::set<std::string> alternatives;
    for (const auto& [pattern, cut_names] : by_pattern) {
        if (!refused.contains(pattern)) {
            alternatives.insert(pattern);
            continue;
        }
        for (std::string_view name : cut_names) {
            alternatives.insert(regex_literal(name)); // a literal matches no kept name
        }
    }
    std::string regex;
    for (const std::string& alternative : alternatives) {
        regex += regex.empty() ? "" : "|";
        regex += alternative;
    }
    return regex;
}

} // namespace heapkit
