// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/allocator_frames.hpp"

#include <array>

namespace heapkit {
namespace {

// What jeprof drops for heap profiles, plus the prefixed jemalloc builds (je_, _rjem_)
// and Rust's allocation shims. Matched against whole simplified names.
constexpr std::array allocator_patterns = {
    // C allocation API and jemalloc's non-standard one
    "malloc",
    "calloc",
    "realloc",
    "free",
    "cfree",
    "memalign",
    "posix_memalign",
    "aligned_alloc",
    "valloc",
    "pvalloc",
    "mallocx",
    "rallocx",
    "xallocx",
    "dallocx",
    "sdallocx",
    "malloc_default",
    // C++ allocation
    "operator new",
    "operator new\\[\\]",
    "fallback_impl",
    "(void\\* )?fallbackNewImpl<.*>",
    "(void\\* )?handleOOM",
    "(void\\* )?newImpl<.*>",
    // tcmalloc and prefixed jemalloc builds
    "tc_.*",
    "je_.*",
    "_rjem_.*",
    // jemalloc internals
    "imalloc",
    "imalloc_body",
    "ialloc",
    "iallocztm",
    "prof_alloc_prep",
    "prof_backtrace",
    "prof_backtrace_impl",
    "prof_tctx_create",
    "irallocx_prof",
    "irallocx_prof_sample",
    "do_rallocx",
    "ixallocx_prof",
    "ixallocx_prof_sample",
    "malloc_default_impl",
    // Rust
    "(__rustc::)?__rust_alloc(_zeroed)?",
    "(__rustc::)?__rust_realloc",
    "(__rustc::)?__rdl_.*",
    "(__rustc::)?__rg_.*",
    "alloc::alloc::.*",
    "alloc::raw_vec::.*",
    "<alloc::raw_vec::.*",
    "<alloc::alloc::Global as .*",
    "<tikv_jemallocator::.*",
    "<jemallocator::.*",
};

std::string join_patterns() {
    std::string joined;
    for (std::string_view pattern : allocator_patterns) {
        if (!joined.empty()) {
            joined += '|';
        }
        joined += pattern;
    }
    return joined;
}

} // namespace

const std::string& allocator_frames_regex() {
    static const std::string regex = join_patterns();
    return regex;
}

std::string_view simplified_function_name(std::string_view name) {
    constexpr std::array reserved = {std::string_view("(anonymous namespace)"),
                                     std::string_view("operator()")};
    size_t from = 0;
    while ((from = name.find('(', from)) != std::string_view::npos) {
        bool is_reserved = false;
        for (std::string_view word : reserved) {
            size_t start = word.find('(');
            if (from >= start && name.substr(from - start, word.size()) == word) {
                is_reserved = true;
                from += word.size() - start;
                break;
            }
        }
        if (!is_reserved) {
            return name.substr(0, from);
        }
    }
    return name;
}

size_t allocator_module_prefix(const Profile& profile, std::span<const uint32_t> locations) {
    size_t count = 0;
    for (uint32_t index : locations) {
        uint32_t module = profile.locations[index].module;
        if (module == no_module || !profile.modules[module].is_allocator) {
            break;
        }
        ++count;
    }
    return count;
}

std::string drop_frames_regex(bool keep_allocator_frames, const std::string& drop_frames) {
    std::string regex = keep_allocator_frames ? std::string() : allocator_frames_regex();
    if (!drop_frames.empty()) {
        regex += regex.empty() ? drop_frames : "|" + drop_frames;
    }
    return regex;
}

AllocatorFrameMatcher::AllocatorFrameMatcher()
    : AllocatorFrameMatcher(allocator_frames_regex()) {}

AllocatorFrameMatcher::AllocatorFrameMatcher(const std::string& regex) {
    if (!regex.empty()) { // std::regex throws on a bad one: the caller checked it
        m_regex.emplace("^(" + regex + ")$", std::regex::ECMAScript | std::regex::optimize);
    }
}

bool AllocatorFrameMatcher::matches(std::string_view name) {
    if (auto it = m_known.find(name); it != m_known.end()) {
        return it->second;
    }
    std::string_view simple = simplified_function_name(name);
    bool match = m_regex && std::regex_match(simple.begin(), simple.end(), *m_regex);
    m_known.emplace(name, match);
    return match;
}

} // namespace heapkit
