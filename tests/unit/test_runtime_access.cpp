// SPDX-License-Identifier: MIT
// Who may talk to the runtime's server: loopback addresses parsed, never looked up, and
// the bearer-token check.
#include "heapkit/runtime/http/admission.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace heapkit::runtime;
using namespace heapkit::runtime::http;

TEST_CASE("heapkit::runtime::is_loopback_address takes numeric loopback addresses only") {
    for (const char* yes :
         {"127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "[::1]", "0:0:0:0:0:0:0:1"}) {
        CHECK_MESSAGE(is_loopback_address(yes), std::string(yes));
    }
    // Names (even "localhost") would go to the resolver; a prefix is not an address.
    for (const char* no : {"localhost", "127.evil.example", "127.0.0.1.evil.example", "127.1",
                           "0.0.0.0", "128.0.0.1", "10.0.0.1", "::", "::2", "::ffff:127.0.0.1", "",
                           "[127.0.0.1]", " 127.0.0.1", "127.0.0.1 "}) {
        CHECK_MESSAGE(!is_loopback_address(no), std::string(no));
    }
}

TEST_CASE("heapkit::runtime::bearer_token_matches") {
    CHECK(bearer_token_matches("Bearer s3cret", "s3cret"));
    // RFC 7235: the scheme is case-insensitive.
    CHECK(bearer_token_matches("bearer s3cret", "s3cret"));
    CHECK(bearer_token_matches("BEARER s3cret", "s3cret"));
    CHECK(bearer_token_matches("Bearer   s3cret ", "s3cret"));
    CHECK_FALSE(bearer_token_matches("Bearer s3cre", "s3cret"));
    CHECK_FALSE(bearer_token_matches("Bearer s3cret2", "s3cret"));
    CHECK_FALSE(bearer_token_matches("Bearer S3CRET", "s3cret")); // the token itself is exact
    CHECK_FALSE(bearer_token_matches("Basic s3cret", "s3cret"));
    CHECK_FALSE(bearer_token_matches("Bearers3cret", "s3cret"));
    CHECK_FALSE(bearer_token_matches("s3cret", "s3cret"));
    CHECK_FALSE(bearer_token_matches("Bearer ", ""));
    CHECK_FALSE(bearer_token_matches("", ""));
}

TEST_CASE("heapkit::runtime::constant_time_equal") {
    CHECK(constant_time_equal("", ""));
    CHECK(constant_time_equal("abc", "abc"));
    CHECK_FALSE(constant_time_equal("abc", "abd"));
    CHECK_FALSE(constant_time_equal("abc", "ab"));
    CHECK_FALSE(constant_time_equal("ab", "abc"));
    CHECK_FALSE(constant_time_equal(std::string_view("a\0c", 3), std::string_view("a\0d", 3)));
}
