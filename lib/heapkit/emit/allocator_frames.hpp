// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/util/string_map.hpp"

#include <regex>
#include <span>
#include <string>
#include <string_view>

namespace heapkit {

// One regex (RE2 and ECMAScript alike) matching the whole simplified name of any
// allocator or jemalloc-internal function (formats.md §5, Rust's included); pprof's
// drop_frames takes it as is.
const std::string& allocator_frames_regex();

// A function name as pprof compares it with drop_frames: the argument list removed
// ("operator new(unsigned long)" -> "operator new"), "(anonymous namespace)" and
// "operator()" kept.
std::string_view simplified_function_name(std::string_view name);

// Answers "is this an allocator frame?" once per distinct name.
class AllocatorFrameMatcher {
public:
    AllocatorFrameMatcher();
    bool matches(std::string_view name);

private:
    std::regex m_regex;
    StringMap<bool> m_known;
};

// How many of a stack's leaf-most `locations` lie in an allocator module (jemalloc's
// library, whose internal functions a stripped build leaves unnamed).
size_t allocator_module_prefix(const Profile& profile, std::span<const uint32_t> locations);

} // namespace heapkit
