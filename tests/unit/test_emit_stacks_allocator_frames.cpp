// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/allocator_frames.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

TEST_CASE("heapkit::simplified_function_name drops arguments as pprof does") {
    CHECK(simplified_function_name("operator new(unsigned long)") == "operator new");
    CHECK(simplified_function_name("operator new[](unsigned long)") == "operator new[]");
    CHECK(simplified_function_name("malloc") == "malloc");
    CHECK(simplified_function_name("(anonymous namespace)::pool::pool()") ==
          "(anonymous namespace)::pool::pool");
    CHECK(simplified_function_name("Foo::operator()(int)") == "Foo::operator()");
}

TEST_CASE("heapkit::AllocatorFrameMatcher knows allocator and jemalloc-internal frames") {
    AllocatorFrameMatcher matcher;
    for (const char* name : {"malloc",
                             "calloc",
                             "realloc",
                             "posix_memalign",
                             "operator new(unsigned long)",
                             "operator new[](unsigned long)",
                             "operator new(unsigned long, std::nothrow_t const&)",
                             "je_prof_backtrace",
                             "je_malloc_default",
                             "imalloc_body",
                             "prof_backtrace_impl",
                             "_rjem_mallocx",
                             "tc_malloc",
                             "__rust_alloc",
                             "__rdl_alloc",
                             "__rustc::__rust_alloc",
                             "alloc::alloc::exchange_malloc",
                             "alloc::raw_vec::RawVec<T,A>::grow_one",
                             "<alloc::raw_vec::RawVec<T,A>>::reserve",
                             "void* newImpl<false>(unsigned long)"}) {
        CHECK_MESSAGE(matcher.matches(name), name);
    }
    for (const char* name : {"main", "hold_pages", "malloc_wrapper", "my_malloc", "prof_report",
                             "alloc::vec::Vec<T>::push", "std::vector<int>::push_back(int const&)",
                             "store::Pool<store::Block>::fill(int)"}) {
        CHECK_FALSE_MESSAGE(matcher.matches(name), name);
    }
}
