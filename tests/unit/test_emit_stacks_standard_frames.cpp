// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/standard_frames.hpp"
#include "heapkit/heapkit.hpp"
#include "test_profiles.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

TEST_CASE("heapkit::is_standard_library_function knows C++'s and Rust's standard libraries") {
    for (const char* name :
         {"std::vector<char, std::allocator<char> >::_M_default_append(unsigned long)",
          "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>("
          "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int "
          "const&)",
          "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
          ">::_M_mutate(unsigned long, unsigned long, char const*, unsigned long)",
          "std::_Rb_tree_node<std::pair<int const, int> >* std::_Rb_tree<int, std::pair<int "
          "const, int>, std::_Select1st<std::pair<int const, int> >, std::less<int>, "
          "std::allocator<std::pair<int const, int> > >::_M_create_node<int const&>(int const&)",
          "std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> > "
          ">::operator[](int const&)",
          "__gnu_cxx::__normal_iterator<int*, std::vector<int> >::operator++()",
          "std::__1::vector<int>::__append(unsigned long)",
          "decltype (::new ((void*)(0)) std::pair<int const, int>((declval<int const&>)())) "
          "std::construct_at<std::pair<int const, int>, int const&>(std::pair<int const, int>*, "
          "int const&)",
          "std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
          "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char "
          "const*)",
          "std::vector<int, std::allocator<int> >::size() const",
          "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
          "std::operator+<char, std::char_traits<char>, std::allocator<char> >(char const*, "
          "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >&&)",
          "bool std::operator< <int>(std::vector<int> const&, std::vector<int> const&)",
          "std::_Rb_tree_iterator<int>::operator->() const",
          "std::__detail::_BracketMatcher<std::__cxx11::regex_traits<char>, false, "
          "false>::_M_apply(char, std::integral_constant<bool, false>) "
          "const::{lambda()#1}::operator()() const",
          "char const* std::__find_if<char const*>(char const*, char const*)",
          "std::vector<char>::_M_default_append(unsigned long) [clone .cold]",
          "alloc::vec::from_elem",
          "alloc::vec::from_elem::<u8>",
          "alloc::raw_vec::RawVecInner<A>::try_allocate_in",
          "alloc::boxed::Box<T>::new",
          "hashbrown::raw::alloc::inner::do_alloc",
          "hashbrown::raw::RawTableInner::new_uninitialized",
          "core::ops::function::FnOnce::call_once",
          "std::rt::lang_start_internal",
          "std::collections::hash::map::HashMap<K,V,S>::insert",
          "alloc::str::<impl str>::repeat",
          "<u8 as alloc::vec::spec_from_elem::SpecFromElem>::from_elem",
          "<T as alloc::vec::spec_from_elem::SpecFromElem>::from_elem",
          "<alloc::vec::Vec<T> as alloc::vec::spec_from_iter::SpecFromIter<T,I>>::from_iter",
          "<alloc::vec::Vec<rjem::Session> as core::clone::Clone>::clone",
          "<[u8]>::to_vec",
          "<u8 as <[_]>::to_vec_in::ConvertVec>::to_vec::<alloc::alloc::Global>",
          "<(u64, alloc::string::String) as core::clone::Clone>::clone",
          "<&str as core::fmt::Display>::fmt"}) {
        CHECK_MESSAGE(is_standard_library_function(name), std::string(name));
    }
    // The program's own, even where a standard name is in it: its type's impl of a
    // standard trait, its closures, a C++ namespace called core, operator new's spelling.
    for (const char* name :
         {"main",
          "remember_session(std::__cxx11::basic_string<char> const&)",
          "store::Pool<store::Block>::fill(int)",
          "rjem::cache::Sessions::remember",
          "<rjem::cache::Sessions>::remember",
          "<rjem::Session as core::clone::Clone>::clone",
          "<u8 as <rjem::Pool>::Fill>::fill",
          "<(u64, rjem::Session) as core::clone::Clone>::clone",
          "<rjem::main::{closure#0} as core::ops::function::FnOnce<()>>::call_once",
          "rust_fixture::make_strings::{{closure}}",
          "core::Engine::grow(unsigned long)",
          "operator new(unsigned long)",
          "stdx::vector::grow",
          "_start",
          "__libc_start_main",
          "std::vector<int, std::allocator<int> > make_list<int>(int)",
          "myapp::Log& myapp::operator<< <int>(myapp::Log&, int const&)",
          "decltype (std::declval<F>()()) myapp::call<F>(F&&)",
          "std::vector<int>* const myapp::cache<int>()",
          "myapp::Index::find(int) const::{lambda(int)#2}::operator()(int) const",
          "bool myapp::Key::operator<(myapp::Key const&) const"}) {
        CHECK_FALSE_MESSAGE(is_standard_library_function(name), std::string(name));
    }
}

namespace {

const std::vector<std::string> remember = {
    "_start",
    "main",
    "remember_session(int)",
    "std::vector<char, std::allocator<char> >::resize(unsigned long)",
    "std::vector<char, std::allocator<char> >::_M_default_append(unsigned long)",
    "std::_Vector_base<char, std::allocator<char> >::_M_allocate(unsigned long)",
    "operator new(unsigned long)",
    "malloc"};
// A thread's trampoline rootward, a program constructor leafward of a std frame.
const std::vector<std::string> worker = {"start_thread", "std::thread::_State_impl<Work>::_M_run()",
                                         "work()",       "void std::vector<Item>::emplace_back<>()",
                                         "Item::Item()", "operator new(unsigned long)",
                                         "malloc"};
// Nothing but the standard library above the allocator: the standard frames stay.
const std::vector<std::string> start_up = {"std::ios_base::Init::Init()", "std::locale::classic()",
                                           "malloc"};

} // namespace

TEST_CASE("heapkit::write_folded cuts the standard library's frames at the leaf end") {
    Profile profile = test::named_profile({{remember, 4096}, {worker, 256}, {start_up, 128}});
    CHECK(write_folded(profile, {}) ==
          "_start;main;remember_session(int) 4096\n"
          "start_thread;std::thread::_State_impl<Work>::_M_run();work();void "
          "std::vector<Item>::emplace_back<>();Item::Item() 256\n"
          "std::ios_base::Init::Init();std::locale::classic() 128\n");
    FoldedOptions keep;
    keep.frames.keep_allocator_frames = true;
    std::string kept = *write_folded(profile, keep);
    CHECK(kept.find("remember_session(int);std::vector<char, std::allocator<char> "
                    ">::resize(unsigned long);std::vector<char, std::allocator<char> "
                    ">::_M_default_append(unsigned long);") != std::string::npos);
}

TEST_CASE("heapkit::standard_drop_frames names what is cut at leaf ends and kept nowhere") {
    Profile profile = test::named_profile({{remember, 4096}, {worker, 256}, {start_up, 128}});
    // One pattern for every instantiation of a template's function.
    CHECK(standard_drop_frames(profile, {}) ==
          "std::vector<.*>::_M_default_append|std::vector<.*>::resize");
    // A name some stack keeps is not dropped: pprof would cut that stack there.
    std::vector<std::string> resizer = {"main",
                                        "std::vector<char, std::allocator<char> "
                                        ">::resize(unsigned long)",
                                        "Item::Item()", "malloc"};
    Profile both = test::named_profile({{remember, 4096}, {resizer, 64}});
    CHECK(standard_drop_frames(both, {}) == "std::vector<.*>::_M_default_append");
    // A pattern matching a name some stack keeps gives way to the names it stood for.
    std::vector<std::string> items = {"main", "std::vector<Item>::resize(unsigned long)",
                                      "Item::Item()", "malloc"};
    Profile other = test::named_profile({{remember, 4096}, {items, 64}});
    CHECK(standard_drop_frames(other, {}) ==
          "std::vector<.*>::_M_default_append|std::vector<char, std::allocator<char> >::resize");
    FrameOptions keep;
    keep.keep_allocator_frames = true;
    CHECK(standard_drop_frames(profile, keep).empty());
}
