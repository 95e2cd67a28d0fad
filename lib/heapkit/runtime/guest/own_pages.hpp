// SPDX-License-Identifier: MIT
// The code pages of heapkit's libraries in a host, given back after each request.
#pragma once

#include <cstddef>

namespace heapkit::runtime {

// Lets go of the read-only pages (code, constants) of heapkit's own libraries (the one
// holding this code: libheapkit-runtime or the agent's core; libheapkit), and of those it
// brings (libdw, libelf, libprotobuf-lite, libfmt, libre2, libdeflate) unless the host
// needs them too: a DT_NEEDED of an object of the host's, or of one of these it needs.
// Clean file pages stay in the page cache: the next request that runs them maps them
// again with a minor fault each. Writable segments and the range the dynamic linker wrote
// (RELRO) are left alone, as is any object with text relocations. Returns the bytes let
// go of (mapped or not). Allocates nothing.
size_t release_own_code_pages();

} // namespace heapkit::runtime
