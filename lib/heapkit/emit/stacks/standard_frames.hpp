// SPDX-License-Identifier: MIT
// The languages' standard libraries at the leaf end of a stack: a container's growth path
// (std::vector<T>::_M_default_append, basic_string::_M_construct, _Rb_tree::_M_create_node,
// alloc::raw_vec, <u8 as SpecFromElem>::from_elem, hashbrown's RawTable) allocates on behalf
// of the program's function that called it, as malloc does. Every view cuts them after
// the allocator frames, up to the first frame outside the standard library, so that the
// program's function is the leaf; --keep-allocator-frames keeps them.
#pragma once

#include "heapkit/emit/options.hpp"
#include "heapkit/model/profile.hpp"

#include <string>
#include <string_view>

namespace heapkit {

// Whether `name` (demangled, as a frame shows it) is a function of C++'s standard library
// (namespaces std and __gnu_cxx, a return type before them allowed) or of Rust's (crates
// std, core and alloc, and hashbrown, which std's HashMap is; an impl of such a crate's
// trait for a primitive or generic type; the crates core::, alloc:: and hashbrown:: only
// in names without a C++ argument list).
bool is_standard_library_function(std::string_view name);

// The standard-library functions this profile's views cut at its stacks' leaf ends and
// never keep in any stack, as a drop_frames alternation of whole simplified names
// (escaped); empty when there are none or `frames` keeps allocator frames. pprof cuts at
// the rootmost frame drop_frames matches: a name that any stack also keeps (a thread's
// std::thread::_State_impl::_M_run, Rust's std::rt::lang_start) would cut that stack
// there, so such names are left out.
std::string standard_drop_frames(const Profile& profile, const FrameOptions& frames);

} // namespace heapkit
