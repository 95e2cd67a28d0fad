// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/allocator_frames.hpp"

#include "heapkit/emit/writers.hpp"
#include "heapkit/model/address_text.hpp"
#include "heapkit/util/lazy_regexes.hpp"
#include "heapkit/util/try.hpp"

#include <algorithm>
#include <array>
#include <unordered_set>

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
    // the exception object a throw allocates (libsupc++'s eh_alloc.cc): the thrower is the
    // leaf
    "__cxa_allocate_exception",
    "__cxa_allocate_dependent_exception",
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
    // The C++ standard libraries' allocator plumbing between a container's operation and
    // operator new (libstdc++'s new_allocator.h, alloc_traits.h, stl_vector.h,
    // basic_string.tcc, hashtable_policy.h, stl_tree.h, stl_deque.h, allocated_ptr.h;
    // libc++'s __memory/allocator.h, __new/allocate.h): without them every C++ stack's
    // leaf is std::__new_allocator<T>::allocate, and the container operation that
    // allocated (vector::resize, string::append) and its caller are one frame further.
    "std::__new_allocator<.*>::allocate",
    "__gnu_cxx::new_allocator<.*>::allocate",
    "std::allocator<.*>::allocate",
    "std::allocator_traits<.*>::allocate",
    "std::_Vector_base<.*>::_M_allocate",
    "std::(__cxx11::)?basic_string<.*>::_M_create",
    "std::__allocate_guarded<.*", // its template arguments may hold "(_Lock_policy)2"
    "std::__detail::_Hashtable_alloc<.*>::_M_allocate_(node|buckets)",
    "std::_Rb_tree<.*>::_M_get_node",
    "std::_Deque_base<.*>::_M_allocate_(node|map)",
    "std::_Fwd_list_base<.*>::_M_get_node",
    "std::__cxx11::_List_base<.*>::_M_get_node",
    "std::_List_base<.*>::_M_get_node",
    "std::__1::allocator<.*>::allocate",
    "std::__1::allocator_traits<.*>::allocate",
    "std::__1::__libcpp_allocate",
    "std::__1::__libcpp_operator_new<.*>",
    // Programs' and libraries' own allocation wrappers, cut like malloc so that their
    // callers are the leaves. Each is a function that only allocates (or hands out a
    // pooled block) on behalf of its caller, by its name in the project's own headers:
    // BIND 9's libisc (isc/mem.h: isc_mem_get() and friends are macros over these),
    "isc__mem_get",
    "isc__mem_reget",
    "isc__mem_allocate",
    "isc__mem_reallocate",
    "isc__mem_strdup",
    "isc__mem_strndup",
    "isc__mempool_get",
    // redis (zmalloc.h),
    "zmalloc",
    "zcalloc",
    "zcalloc_num",
    "zrealloc",
    "ztrymalloc",
    "ztrycalloc",
    "ztryrealloc",
    "zmalloc_usable",
    "zcalloc_usable",
    "zrealloc_usable",
    "ztrymalloc_usable",
    "ztrycalloc_usable",
    "ztryrealloc_usable",
    "ztrymalloc_usable_internal",
    "ztrycalloc_usable_internal",
    "ztryrealloc_usable_internal",
    "zmalloc_no_tcache",
    "zstrdup",
    // GLib (gmem.h, gslice.h),
    "g_malloc",
    "g_malloc0",
    "g_realloc",
    "g_try_malloc",
    "g_try_malloc0",
    "g_try_realloc",
    "g_malloc_n",
    "g_malloc0_n",
    "g_realloc_n",
    "g_try_malloc_n",
    "g_try_malloc0_n",
    "g_try_realloc_n",
    "g_slice_alloc",
    "g_slice_alloc0",
    // CPython (pymem.h, objimpl.h, obmalloc.c),
    "PyMem_Malloc",
    "PyMem_Calloc",
    "PyMem_Realloc",
    "PyMem_RawMalloc",
    "PyMem_RawCalloc",
    "PyMem_RawRealloc",
    "PyObject_Malloc",
    "PyObject_Calloc",
    "PyObject_Realloc",
    "_PyObject_Malloc",
    "_PyObject_Calloc",
    "_PyObject_Realloc",
    "_PyMem_RawMalloc",
    "_PyMem_RawCalloc",
    "_PyMem_RawRealloc",
    "pymalloc_alloc",
    "pymalloc_realloc",
    // libiberty and gnulib (xmalloc.h), OpenSSL (crypto.h), libuv, nghttp2, libknot.
    "xmalloc",
    "xcalloc",
    "xrealloc",
    "xzalloc",
    "CRYPTO_malloc",
    "CRYPTO_zalloc",
    "CRYPTO_realloc",
    "CRYPTO_clear_realloc",
    "uv__malloc",
    "uv__calloc",
    "uv__realloc",
    "uv__reallocf",
    "nghttp2_mem_malloc",
    "nghttp2_mem_calloc",
    "nghttp2_mem_realloc",
    "mm_alloc",
    "mm_calloc",
    "mm_realloc",
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
    // Never destroyed: a runtime's server thread may still convert while the process exits.
    static const auto* regex = new std::string(join_patterns());
    return *regex;
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

namespace {

bool is_literal(std::string_view pattern) {
    return pattern.find_first_of("\\^$.|?*+()[]{}") == std::string_view::npos;
}

// The allocator patterns split once per process: most are plain names, looked up in a
// set; the others matched one by one, each compiled on first use (LazyRegexes):
// compiling them all into RE2 at once was a tenth of a warm run's library time, and most
// runs meet no name that needs one.
struct AllocatorPatterns {
    std::unordered_set<std::string_view> names;
    LazyRegexes patterns; // the non-literal ones
    std::string rest;     // the non-literal patterns, joined with '|'
};

const AllocatorPatterns& allocator_patterns_split() {
    // Never destroyed: a runtime's server thread may still convert while the process exits.
    static const auto* split = [] {
        auto* made = new AllocatorPatterns;
        for (std::string_view pattern : allocator_patterns) {
            if (is_literal(pattern)) {
                made->names.insert(pattern);
            } else {
                made->patterns.add(pattern);
                made->rest += made->rest.empty() ? "" : "|";
                made->rest += pattern;
            }
        }
        return made;
    }();
    return *split;
}

} // namespace

AllocatorFrameMatcher::AllocatorFrameMatcher()
    : AllocatorFrameMatcher(&allocator_patterns_split().names, std::nullopt) {
    m_patterns = &allocator_patterns_split().patterns;
}

AllocatorFrameMatcher::AllocatorFrameMatcher(const std::string& regex)
    : AllocatorFrameMatcher(*make(regex)) {}

Result<AllocatorFrameMatcher> AllocatorFrameMatcher::make(const std::string& regex) {
    if (regex.empty()) {
        return AllocatorFrameMatcher(nullptr, std::nullopt);
    }
    const std::string& allocator = allocator_frames_regex();
    if (regex == allocator) {
        return AllocatorFrameMatcher();
    }
    // drop_frames_regex's join: the allocator's names from the set, the rest and the
    // user's patterns in one regex (the same alternatives, matched whole).
    if (regex.size() > allocator.size() + 1 && regex.starts_with(allocator) &&
        regex[allocator.size()] == '|') {
        std::string rest = allocator_patterns_split().rest + regex.substr(allocator.size());
        HEAPKIT_TRY_ASSIGN(Regex compiled, Regex::compile("(?:" + rest + ")"));
        return AllocatorFrameMatcher(&allocator_patterns_split().names, std::move(compiled));
    }
    HEAPKIT_TRY_ASSIGN(Regex compiled, Regex::compile("(?:" + regex + ")"));
    return AllocatorFrameMatcher(nullptr, std::move(compiled));
}

bool AllocatorFrameMatcher::matches(std::string_view name) {
    if (auto it = m_known.find(name); it != m_known.end()) {
        return it->second;
    }
    std::string_view simple = simplified_function_name(name);
    bool match = (m_names != nullptr && m_names->contains(simple)) ||
                 (m_regex && m_regex->full_match(simple)) ||
                 (m_patterns != nullptr && m_patterns->full_match(simple));
    m_known.emplace(name, match);
    return match;
}

bool drop_frames_match(const Profile& profile, const std::string& drop_frames) {
    auto matcher = AllocatorFrameMatcher::make(drop_frames);
    if (!matcher) {
        return false;
    }
    for (const Location& location : profile.locations) {
        if (location.frames.empty() && matcher->matches(location_address_text(profile, location))) {
            return true;
        }
        for (const Frame& frame : location.frames) {
            if (matcher->matches(frame.name)) {
                return true;
            }
        }
    }
    return false;
}

} // namespace heapkit
