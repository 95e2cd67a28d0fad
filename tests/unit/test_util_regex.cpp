// SPDX-License-Identifier: MIT
#include "heapkit/util/regex.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace heapkit;

TEST_CASE("heapkit::Regex reads pprof's syntax (RE2's, Go's regexp)") {
    // Inline flags and Perl classes: pprof users write them; std::regex's ECMAScript
    // refused "(?i)".
    auto insensitive = Regex::compile("(?i)^app_ALLOC$");
    REQUIRE(insensitive);
    CHECK(insensitive->search("app_alloc"));
    CHECK_FALSE(insensitive->search("app_alloc2"));
    auto named = Regex::compile(R"((?P<module>\w+)\.so\+0x[[:xdigit:]]+)");
    REQUIRE(named);
    CHECK(named->search("libfoo.so+0x1a2b"));
}

TEST_CASE("heapkit::Regex searches or matches whole") {
    auto regex = *Regex::compile("malloc|je_.*");
    CHECK(regex.search("my_malloc_wrapper"));
    CHECK_FALSE(regex.full_match("my_malloc_wrapper"));
    CHECK(regex.full_match("malloc"));
    CHECK(regex.full_match("je_mallocx"));
    CHECK_FALSE(regex.full_match(""));
    // Copies share the compiled program.
    Regex copy = regex;
    CHECK(copy.full_match("je_free"));
}

TEST_CASE("heapkit::Regex names the pattern it refuses") {
    for (const char* bad : {"serve(", "a{2,1}", "[z-a]", "(?<=x)y", "\\1"}) {
        auto refused = Regex::compile(bad);
        REQUIRE_FALSE_MESSAGE(refused, bad);
        CHECK_MESSAGE(refused.error().message.find(std::string("\"") + bad + "\"") !=
                          std::string::npos,
                      refused.error().message);
        CHECK(refused.error().message.starts_with("invalid regular expression"));
    }
}

TEST_CASE("heapkit::Regex takes time linear in the text, whatever the pattern") {
    // Nested repetition: a backtracking matcher (std::regex) tries 2^n ways to split the
    // a's before failing; RE2 one pass.
    auto nested = *Regex::compile("^(a|aa)*(a*)*b$");
    std::string text(100000, 'a');
    CHECK_FALSE(nested.search(text));
    CHECK(nested.search(text + "b"));
}

TEST_CASE("heapkit::regex_literal matches exactly its text, escaping only metacharacters") {
    std::string name = "std::vector<char, std::allocator<char> >::operator[](unsigned long) "
                       "a.b|c*d+e?f^g$h{1}\\i libx-1.so!0x1f";
    std::string literal = regex_literal(name);
    // Spaces, '<', ',' and '!' stay as they are: Go's regexp refuses "\ " and "\<".
    CHECK(literal.find("\\ ") == std::string::npos);
    CHECK(literal.find("\\<") == std::string::npos);
    auto compiled = Regex::compile(literal);
    REQUIRE(compiled);
    CHECK(compiled->full_match(name));
    CHECK_FALSE(compiled->full_match(name + "x"));
    CHECK_FALSE(compiled->full_match("std::vector<char, std::allocator<char> >::operator[]"));
}

TEST_CASE("heapkit::literal_starts: what every whole match begins with") {
    using Starts = std::vector<std::string>;
    CHECK(literal_starts("tc_.*") == Starts{"tc_"});
    CHECK(literal_starts("operator new\\[\\]") == Starts{"operator new[]"});
    CHECK(literal_starts("(void\\* )?newImpl<.*>") == Starts{"newImpl<", "void* newImpl<"});
    CHECK(literal_starts("std::(__cxx11::)?basic_string<.*>::_M_create") ==
          Starts{"std::basic_string<", "std::__cxx11::basic_string<"});
    CHECK(literal_starts("(__rustc::)?__rust_alloc(_zeroed)?") ==
          Starts{"__rust_alloc", "__rustc::__rust_alloc", "__rust_alloc_zeroed",
                 "__rustc::__rust_alloc_zeroed"});
    CHECK(literal_starts("a_(node|map)") == Starts{"a_"});
    // A quantified character may be missing; a class or an anchor ends the literal.
    CHECK(literal_starts("ab*c") == Starts{"a"});
    CHECK(literal_starts("ab{2}c") == Starts{"a"});
    CHECK(literal_starts("x\\d+") == Starts{"x"});
    CHECK(literal_starts("[ab]c") == Starts{""});
    CHECK(literal_starts("(?i)abc") == Starts{""});
    CHECK(literal_starts("(ab)c") == Starts{""});
    // An alternation outside parentheses: either side may match.
    CHECK(literal_starts("abc|xyz") == Starts{""});
    CHECK(literal_starts("(a)?b|c") == Starts{""});
    CHECK(literal_starts("a[|]b") == Starts{"a"});
}
