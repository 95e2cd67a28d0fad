// SPDX-License-Identifier: MIT
#pragma once

#include <string_view>

namespace heapkit {

// A function's name without the suffixes GCC gives the copies it makes of it, so that the
// copies read as the one function a user wrote: C names "f.part.0", "f.constprop.0",
// "f.isra.0", "f.cold", "f.lto_priv.0" (and chains of them) become "f"; demangled C++
// names lose their " [clone .constprop.0]" tails. Other names come back unchanged.
std::string_view without_clone_suffixes(std::string_view name);

} // namespace heapkit
