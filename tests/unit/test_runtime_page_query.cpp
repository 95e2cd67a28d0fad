// SPDX-License-Identifier: MIT
#include "heapkit/runtime/pages/page_query.hpp"

#include <doctest/doctest.h>

using namespace heapkit::runtime;

TEST_CASE("heapkit::runtime::percent_decode decodes escapes and '+', refuses broken ones") {
    CHECK(percent_decode("a%20b+c") == "a b c");
    CHECK(percent_decode("prof.active%3Atrue") == "prof.active:true");
    CHECK(percent_decode("%7e%7E") == "~~");
    CHECK(percent_decode("") == "");
    CHECK_FALSE(percent_decode("%"));
    CHECK_FALSE(percent_decode("%4"));
    CHECK_FALSE(percent_decode("%zz"));
}

TEST_CASE("heapkit::runtime::parse_query takes the allowed keys, decoded") {
    static constexpr std::string_view allowed[] = {"seconds", "sample"};
    auto query = parse_query("/debug/pprof/heap", "seconds=5&sample=alloc%5Fspace", allowed);
    REQUIRE(query);
    CHECK(query->at("seconds") == "5");
    CHECK(query->at("sample") == "alloc_space");
    CHECK(parse_query("/p", "", allowed)->empty());

    auto unknown = parse_query("/debug/pprof/heap", "colour=blue", allowed);
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message.find("/debug/pprof/heap") != std::string::npos);
    CHECK(unknown.error().message.find("colour") != std::string::npos);
    CHECK(parse_query("/p", "seconds", allowed)->at("seconds").empty()); // a key alone
    CHECK_FALSE(parse_query("/p", "seconds=%g1", allowed));              // broken escape
}

TEST_CASE("heapkit::runtime::query_flag and query_number read values or fall back") {
    Query query{{"on", "1"},    {"off", "false"}, {"bad", "maybe"}, {"n", "30"},
                {"big", "301"}, {"neg", "-1"},    {"word", "ten"}};
    CHECK(query_flag(query, "on", false) == true);
    CHECK(query_flag(query, "off", true) == false);
    CHECK(query_flag(query, "absent", true) == true);
    CHECK_FALSE(query_flag(query, "bad", true));
    CHECK(query_number(query, "n", 1, 1, 300) == 30u);
    CHECK(query_number(query, "absent", 7, 1, 300) == 7u);
    CHECK_FALSE(query_number(query, "big", 1, 1, 300));
    CHECK_FALSE(query_number(query, "neg", 1, 1, 300));
    CHECK_FALSE(query_number(query, "word", 1, 1, 300));
}

TEST_CASE("heapkit::runtime::text and binary answers") {
    Response plain = text(404, "no such page");
    CHECK(plain.status == 404);
    CHECK(plain.body == "no such page\n");
    Response bytes = binary("\x1f\x8b", "application/octet-stream", "heap.pb.gz");
    CHECK(bytes.status == 200);
    CHECK(bytes.content_type == "application/octet-stream");
    CHECK(bytes.headers.at("Content-Disposition").find("heap.pb.gz") != std::string::npos);
}
