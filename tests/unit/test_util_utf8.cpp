// SPDX-License-Identifier: MIT
#include "heapkit/util/utf8.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

TEST_CASE("heapkit::valid_utf8 keeps UTF-8 and replaces everything else") {
    CHECK(valid_utf8("plain /usr/lib/libc.so.6") == "plain /usr/lib/libc.so.6");
    CHECK(valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x90\x98") ==
          "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x90\x98");
    CHECK(valid_utf8("latin1 caf\xE9") == "latin1 caf\xEF\xBF\xBD");
    CHECK(valid_utf8("\xFF\xFE") == "\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");                 // overlong
    CHECK(valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); // surrogate
    CHECK(valid_utf8("cut \xE2\x82") == "cut \xEF\xBF\xBD\xEF\xBF\xBD");         // truncated
    CHECK(valid_utf8(std::string_view("nul\0ok", 6)) == std::string("nul\0ok", 6));
}
