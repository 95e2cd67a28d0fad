// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/allocator_frames.hpp"
#include "heapkit/util/regex.hpp"

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
                             "void* newImpl<false>(unsigned long)",
                             "__cxa_allocate_exception",
                             "__cxa_allocate_dependent_exception"}) {
        CHECK_MESSAGE(matcher.matches(name), name);
    }
    for (const char* name :
         {"main", "hold_pages", "malloc_wrapper", "my_malloc", "prof_report", "__cxa_throw",
          "alloc::vec::Vec<T>::push", "std::vector<int>::push_back(int const&)",
          "store::Pool<store::Block>::fill(int)"}) {
        CHECK_FALSE_MESSAGE(matcher.matches(name), name);
    }
}

TEST_CASE("heapkit::AllocatorFrameMatcher cuts well-known allocation wrappers, whole names only") {
    AllocatorFrameMatcher matcher;
    for (const char* wrapper :
         {"isc__mem_get", "isc__mempool_get", "zmalloc", "ztrymalloc_usable", "zcalloc",
          "zcalloc_num", "zrealloc", "g_malloc", "g_malloc0_n", "g_slice_alloc", "PyMem_Malloc",
          "PyObject_Malloc", "_PyObject_Malloc", "PyMem_RawCalloc", "xmalloc", "CRYPTO_zalloc",
          "uv__malloc", "nghttp2_mem_malloc", "mm_alloc"}) {
        CHECK_MESSAGE(matcher.matches(wrapper), wrapper);
    }
    // Their neighbours that do not allocate for a caller (statistics, freeing) stay.
    for (const char* other : {"zmalloc_used_memory", "zfree", "isc__mem_put", "isc_mem_create",
                              "g_free", "PyMem_Free", "xmalloc_failed", "g_malloc_x"}) {
        CHECK_FALSE_MESSAGE(matcher.matches(other), other);
    }
}

TEST_CASE("heapkit::AllocatorFrameMatcher cuts the C++ libraries' allocator plumbing, not the "
          "container operations") {
    AllocatorFrameMatcher matcher;
    for (const char* plumbing :
         {"std::__new_allocator<char>::allocate(unsigned long, void const*)",
          "__gnu_cxx::new_allocator<Session*>::allocate(unsigned long, void const*)",
          "std::allocator_traits<std::allocator<char> >::allocate(std::allocator<char>&, "
          "unsigned long)",
          "std::_Vector_base<char, std::allocator<char> >::_M_allocate(unsigned long)",
          "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
          ">::_M_create(unsigned long&, unsigned long)",
          "std::__allocate_guarded<std::allocator<std::_Sp_counted_ptr_inplace<Session, "
          "std::allocator<Session>, (__gnu_cxx::_Lock_policy)2> > >(std::allocator<std::"
          "_Sp_counted_ptr_inplace<Session, std::allocator<Session>, (__gnu_cxx::_Lock_policy)"
          "2> >&)",
          "std::__detail::_Hashtable_alloc<std::allocator<std::__detail::_Hash_node<std::pair<"
          "int const, int>, false> > >::_M_allocate_buckets(unsigned long)",
          "std::_Rb_tree<int, int, std::_Identity<int>, std::less<int>, std::allocator<int> "
          ">::_M_get_node()",
          "std::__1::allocator<char>::allocate(unsigned long)",
          "std::__1::__libcpp_allocate(unsigned long, unsigned long)"}) {
        CHECK_MESSAGE(matcher.matches(plumbing), plumbing);
    }
    // Not the allocator list's: the container's own operations, cut at a leaf end by the
    // standard library's rule (standard_frames.hpp), and the thread machinery, which a
    // drop_frames pattern would cut with every stack of the thread.
    for (const char* operation :
         {"std::vector<char, std::allocator<char> >::resize(unsigned long)",
          "std::vector<char, std::allocator<char> >::_M_default_append(unsigned long)",
          "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
          ">::_M_append(char const*, unsigned long)",
          "std::thread::_State_impl<std::thread::_Invoker<std::tuple<void (*)()> > >::_M_run()",
          "std::_Rb_tree<int, int, std::_Identity<int>, std::less<int>, std::allocator<int> "
          ">::_M_insert_unique<int const&>(int const&)"}) {
        CHECK_FALSE_MESSAGE(matcher.matches(operation), operation);
    }
}

TEST_CASE(
    "heapkit::AllocatorFrameMatcher::make: a drop_frames regex in pprof's syntax, or its error") {
    auto matcher = AllocatorFrameMatcher::make("(?i)app_ALLOC|app_strdup");
    REQUIRE(matcher);
    CHECK(matcher->matches("APP_alloc(unsigned long)"));
    CHECK(matcher->matches("app_strdup"));
    CHECK_FALSE(matcher->matches("app_alloc_stats"));
    auto empty = AllocatorFrameMatcher::make("");
    REQUIRE(empty);
    CHECK_FALSE(empty->matches("malloc"));
    auto refused = AllocatorFrameMatcher::make("app_(alloc");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("app_(alloc") != std::string::npos);
}

// The allocator's non-literal patterns are each compiled only for a name that begins as
// their matches must (literal_starts): the answers are the whole regex's, names that
// match through an optional group or a template included.
TEST_CASE("heapkit::AllocatorFrameMatcher answers as the whole allocator regex does") {
    auto whole = Regex::compile("(?:" + allocator_frames_regex() + ")");
    REQUIRE(whole);
    AllocatorFrameMatcher matcher;
    size_t matched = 0;
    for (const char* name : {"operator new[]",
                             "operator new[](unsigned long)",
                             "operator new []",
                             "fallback_impl",
                             "fallbackNewImpl<true>",
                             "void* fallbackNewImpl<true>(unsigned long)",
                             "handleOOM",
                             "void* handleOOM(unsigned long, bool)",
                             "void*handleOOM",
                             "newImpl<x>",
                             "newImpl",
                             "tc_",
                             "tc_new",
                             "tc",
                             "je_",
                             "je_mallocx",
                             "_rjem_",
                             "_rjem_sdallocx",
                             "_rje",
                             "std::__new_allocator<int>::allocate",
                             "std::__new_allocator<int>::deallocate",
                             "__gnu_cxx::new_allocator<int>::allocate",
                             "std::allocator<int>::allocate",
                             "std::allocator_traits<std::allocator<int> >::allocate",
                             "std::_Vector_base<int>::_M_allocate",
                             "std::basic_string<char>::_M_create",
                             "std::__cxx11::basic_string<char>::_M_create",
                             "std::__cxx11::basic_string<char>",
                             "std::__allocate_guarded<x",
                             "std::__detail::_Hashtable_alloc<x>::_M_allocate_node",
                             "std::__detail::_Hashtable_alloc<x>::_M_allocate_buckets",
                             "std::__detail::_Hashtable_alloc<x>::_M_allocate_map",
                             "std::_Rb_tree<x>::_M_get_node",
                             "std::_Deque_base<x>::_M_allocate_node",
                             "std::_Deque_base<x>::_M_allocate_map",
                             "std::_Fwd_list_base<x>::_M_get_node",
                             "std::__cxx11::_List_base<x>::_M_get_node",
                             "std::_List_base<x>::_M_get_node",
                             "std::__1::allocator<x>::allocate",
                             "std::__1::allocator_traits<x>::allocate",
                             "std::__1::__libcpp_allocate",
                             "std::__1::__libcpp_operator_new<x>",
                             "std::__1::__libcpp_operator_new<x>y",
                             "__rust_alloc",
                             "__rust_alloc_zeroed",
                             "__rustc::__rust_alloc",
                             "__rustc::__rust_alloc_zeroed",
                             "__rust_alloc_zero",
                             "__rust_realloc",
                             "__rustc::__rust_realloc",
                             "__rdl_alloc",
                             "__rustc::__rdl_alloc",
                             "__rg_oom",
                             "__rustc::__rg_oom",
                             "alloc::alloc::exchange_malloc",
                             "alloc::raw_vec::finish_grow",
                             "<alloc::raw_vec::RawVec<T>>::grow",
                             "<alloc::alloc::Global as core::Alloc>::allocate",
                             "<tikv_jemallocator::Jemalloc as x>::alloc",
                             "<jemallocator::Jemalloc as x>::alloc",
                             "alloc::vec::Vec<T>::push",
                             "std::vector<int>::push_back",
                             "main",
                             "",
                             "_",
                             "dictAddRaw",
                             "__libc_start_main_impl",
                             "malloc",
                             "zmalloc"}) {
        std::string_view simple = simplified_function_name(name);
        bool expected = whole->full_match(simple);
        matched += expected ? 1 : 0;
        CHECK_MESSAGE(matcher.matches(name) == expected, name);
    }
    CHECK(matched > 40);
}
