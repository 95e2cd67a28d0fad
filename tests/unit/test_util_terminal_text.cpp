// SPDX-License-Identifier: MIT
#include "heapkit/util/terminal_text.hpp"

#include <doctest/doctest.h>

using namespace heapkit;

TEST_CASE("heapkit::terminal_safe escapes control characters, C0, DEL and C1") {
    CHECK(terminal_safe("operator new(unsigned long)") == "operator new(unsigned long)");
    CHECK(terminal_safe("\x1b[31mred\x07") == "\\x1b[31mred\\x07");
    CHECK(terminal_safe("a\tb\nc\x7f") == "a\\x09b\\x0ac\\x7f");
    CHECK(terminal_safe("\xc2\x9b"
                        "2J") == "\\u009b2J");            // CSI, the 8-bit way
    CHECK(terminal_safe("caf\xc3\xa9") == "caf\xc3\xa9"); // UTF-8 as it is
    CHECK(terminal_safe("bad\xff") == "bad\xef\xbf\xbd"); // not UTF-8: U+FFFD
    CHECK(terminal_safe("C:\\dir") == "C:\\dir");
}

TEST_CASE("heapkit::terminal_safe_lines keeps newlines and tabs, escapes the rest") {
    CHECK(terminal_safe_lines("no such page: /a\tb\n") == "no such page: /a\tb\n");
    CHECK(terminal_safe_lines("no such page: /\x1b]0;owned\x07\r\n") ==
          "no such page: /\\x1b]0;owned\\x07\\x0d\n");
}
