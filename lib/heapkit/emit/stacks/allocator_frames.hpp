// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/util/lazy_regexes.hpp"
#include "heapkit/util/regex.hpp"
#include "heapkit/util/string_map.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

namespace heapkit {

// One regex (RE2's syntax, pprof's) matching the whole simplified name of any
// allocator or jemalloc-internal function (formats.md §5, Rust's included); pprof's
// drop_frames takes it as is.
const std::string& allocator_frames_regex();

// A function name as pprof compares it with drop_frames: the argument list removed
// ("operator new(unsigned long)" -> "operator new"), "(anonymous namespace)" and
// "operator()" kept.
std::string_view simplified_function_name(std::string_view name);

// The drop_frames regex of a view: the allocator's unless they are kept, and the user's
// own (pprof's vocabulary), joined; empty when nothing is dropped.
std::string drop_frames_regex(bool keep_allocator_frames, const std::string& drop_frames);

// Answers "does drop_frames take this frame?" once per distinct name, matching the whole
// simplified name as pprof does. The default is the allocator regex; an empty regex
// matches nothing. An invalid regex is an error of make(); the constructors take only
// regexes known to compile (the allocator's, or one the command line checked).
class AllocatorFrameMatcher {
public:
    AllocatorFrameMatcher();
    explicit AllocatorFrameMatcher(const std::string& regex);
    static Result<AllocatorFrameMatcher> make(const std::string& regex);
    bool matches(std::string_view name);

private:
    AllocatorFrameMatcher(const std::unordered_set<std::string_view>* names,
                          std::optional<Regex> regex)
        : m_names(names)
        , m_regex(std::move(regex)) {}

    const std::unordered_set<std::string_view>* m_names; // whole names matched; may be null
    std::optional<Regex> m_regex;                        // none: matches no other name
    const LazyRegexes* m_patterns = nullptr;             // the allocator's others, or null
    StringMap<bool> m_known;
};

// How many of a stack's leaf-most `locations` lie in an allocator module (jemalloc's
// library, whose internal functions a stripped build leaves unnamed).
size_t allocator_module_prefix(const Profile& profile, std::span<const uint32_t> locations);

} // namespace heapkit
