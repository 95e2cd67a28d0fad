// SPDX-License-Identifier: MIT
#include "heapkit/model/string_pool.hpp"
#include "heapkit/symbolize/frame_strings.hpp"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace heapkit;

TEST_CASE("a pool keeps each text once, and its views stay valid as it grows") {
    StringPool pool;
    std::string text = "foo::bar(int)";
    std::string_view first = pool.intern(text);
    text[0] = 'x'; // the pool holds its own copy
    CHECK(first == "foo::bar(int)");
    CHECK(pool.intern("foo::bar(int)").data() == first.data());
    CHECK(pool.intern("").empty());

    // Enough short texts to fill many blocks, and long ones that get blocks of their own.
    std::vector<std::string> texts;
    for (int i = 0; i < 20000; ++i) {
        texts.push_back("function_" + std::to_string(i));
        if (i % 1000 == 0) {
            texts.push_back(std::string(100000 + i, static_cast<char>('a' + i % 26)));
        }
    }
    std::vector<std::string_view> views;
    for (const std::string& t : texts) {
        views.push_back(pool.intern(t));
    }
    for (size_t i = 0; i < texts.size(); ++i) {
        REQUIRE(views[i] == texts[i]);
        CHECK(pool.intern(texts[i]).data() == views[i].data());
    }
    CHECK(first == "foo::bar(int)");
    CHECK(pool.size() == texts.size() + 1);
}

TEST_CASE("frame strings demangle each symbol once, into the pool") {
    StringPool pool;
    FrameStrings strings(pool);
    std::string_view shown = strings.demangled("_ZN3foo3barEv");
    CHECK(shown == "foo::bar()");
    CHECK(strings.demangled(std::string("_ZN3foo3barEv")).data() == shown.data());
    CHECK(strings.demangled("main") == "main");
    CHECK(pool.intern("foo::bar()").data() == shown.data());
}
