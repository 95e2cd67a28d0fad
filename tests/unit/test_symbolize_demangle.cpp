// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/demangle.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

TEST_CASE("heapkit::demangle reads C++, Rust legacy and Rust v0 names") {
    CHECK(demangle("_ZN5store4PoolINS_5BlockEE4fillEi") == "store::Pool<store::Block>::fill(int)");
    CHECK(demangle("_Znwm") == "operator new(unsigned long)");
    // Rust legacy: the ::h<16 hex> hash suffix is dropped.
    CHECK(demangle("_ZN4core3fmt5write17h0123456789abcdefE") == "core::fmt::write");
    // Rust v0.
    CHECK(demangle("_RNvCs1234_7mycrate3foo") == "mycrate::foo");
    CHECK(demangle("main") == "main");
    CHECK(demangle("_Z") == "_Z");
    CHECK(demangle("_ZZZnot_mangled") == "_ZZZnot_mangled");
}
