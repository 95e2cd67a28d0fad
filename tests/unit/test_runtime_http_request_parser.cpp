// SPDX-License-Identifier: MIT
// The server's request parser fed from strings: framing http-parser refuses, the limits
// and checks this adds, pipelined requests one at a time.
#include "heapkit/runtime/http/admission.hpp"
#include "heapkit/runtime/http/request_parser.hpp"
#include "heapkit/runtime/http/response_bytes.hpp"

#include <doctest/doctest.h>
#include <string>

using namespace heapkit::runtime;
using namespace heapkit::runtime::http;

namespace {

struct Outcome {
    RequestParser::State state;
    Request request;
    Response refusal;
    size_t used = 0;
};

Outcome parse(const std::string& bytes, const AdmissionRules& rules = {},
              ParserLimits limits = {}) {
    RequestParser parser(limits, [&](const Request& head, std::optional<uint64_t>) {
        return refuse_head(head, rules);
    });
    Outcome outcome;
    outcome.used = parser.feed(bytes);
    outcome.state = parser.state();
    if (outcome.state == RequestParser::State::complete) {
        outcome.request = parser.take_request();
    } else if (outcome.state == RequestParser::State::refused) {
        outcome.refusal = parser.take_refusal();
    }
    return outcome;
}

int status_of(const std::string& bytes, const AdmissionRules& rules = {}) {
    Outcome outcome = parse(bytes, rules);
    return outcome.state == RequestParser::State::refused    ? outcome.refusal.status
           : outcome.state == RequestParser::State::complete ? 200
                                                             : 0;
}

} // namespace

TEST_CASE("heapkit::runtime::http::RequestParser reads a request into heapkit's Request") {
    Outcome outcome = parse("GET /pprof/h%65ap?seconds=3&x=a+b HTTP/1.1\r\nHost: 127.0.0.1:6060\r\n"
                            "X-Thing: one\r\nx-thing: two\r\n\r\n");
    REQUIRE(outcome.state == RequestParser::State::complete);
    CHECK(outcome.request.method == "GET");
    CHECK(outcome.request.path == "/pprof/heap");
    CHECK(outcome.request.query == "seconds=3&x=a+b");
    CHECK(outcome.request.headers.at("host") == "127.0.0.1:6060");
    CHECK(outcome.request.headers.at("x-thing") == "one, two");
}

TEST_CASE("heapkit::runtime::http::RequestParser refuses bad framing with one clean 400") {
    for (const char* bytes : {
             "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
             "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n"
             "Transfer-Encoding: chunked\r\n\r\n",
             "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n",
             "POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
             "GET / HTTP/1.1\r\nHost : localhost\r\n\r\n",
             "GET / HTTP/1.1\r\n\r\n",
             "GET http://localhost/ HTTP/1.1\r\nHost: localhost\r\n\r\n",
             "GET / HTTP/1.1\r\nHost: localhost\r\nHost: localhost\r\n\r\n",
             "GET /%zz HTTP/1.1\r\nHost: localhost\r\n\r\n",
         }) {
        Outcome outcome = parse(bytes);
        CHECK_MESSAGE(outcome.state == RequestParser::State::refused, bytes);
        CHECK_MESSAGE(outcome.refusal.status == 400, bytes);
        std::string wire = response_bytes(outcome.refusal, false, true);
        CHECK(wire.find("\nHTTP/1.1 ") == std::string::npos); // one status line
    }
}

TEST_CASE("heapkit::runtime::http::RequestParser keeps its limits: 414, 431, 413") {
    CHECK(status_of("GET /" + std::string(17000, 'a') + " HTTP/1.1\r\nHost: localhost\r\n\r\n") ==
          414);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: localhost\r\nX: " + std::string(20000, 'a') +
                    "\r\n\r\n") == 431);
    std::string many = "GET / HTTP/1.1\r\nHost: localhost\r\n";
    for (int i = 0; i < 70; ++i) {
        many += "X-" + std::to_string(i) + ": 1\r\n";
    }
    CHECK(status_of(many + "\r\n") == 431);
    CHECK(status_of("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2000000\r\n\r\n") ==
          413);
    std::string chunked =
        "POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 20; ++i) {
        chunked += "10000\r\n" + std::string(0x10000, 'x') + "\r\n";
    }
    CHECK(status_of(chunked + "0\r\n\r\n") == 413);
    // 400 parameters in a 1.6 KB URL: a request like any other.
    std::string query;
    for (int i = 0; i < 400; ++i) {
        query += (i ? "&" : "") + std::string("a=1");
    }
    CHECK(status_of("GET /metrics?" + query + " HTTP/1.1\r\nHost: localhost\r\n\r\n") == 200);
}

TEST_CASE("heapkit::runtime::http::RequestParser gives pipelined requests one at a time") {
    std::string two =
        "GET /a HTTP/1.1\r\nHost: localhost\r\n\r\nGET /b HTTP/1.1\r\nHost: localhost\r\n"
        "Connection: close\r\n\r\n";
    RequestParser parser({}, {});
    size_t used = parser.feed(two);
    REQUIRE(parser.state() == RequestParser::State::complete);
    CHECK(parser.take_request().path == "/a");
    CHECK(parser.keep_alive());
    parser.next();
    parser.feed(std::string_view(two).substr(used));
    REQUIRE(parser.state() == RequestParser::State::complete);
    CHECK(parser.take_request().path == "/b");
    CHECK_FALSE(parser.keep_alive());
}

TEST_CASE("heapkit::runtime::http::refuse_head: Host names this server, no other site") {
    AdmissionRules loopback;
    for (const char* host : {"127.0.0.1", "127.0.0.1:6060", "[::1]:6060", "[::1]", "localhost",
                             "LOCALHOST:80", "localhost.:1", "127.3.2.1:1"}) {
        CHECK_MESSAGE(host_allowed(host, loopback), host);
    }
    for (const char* host :
         {"evil.example", "evil.example:6060", "127.0.0.1.evil.example", "10.0.0.1", "[::2]", "::1",
          "localhost:http", "", ":80", "db7.example.net"}) {
        CHECK_MESSAGE(!host_allowed(host, loopback), host);
    }
    AdmissionRules beyond{"s3cret", true, "db7.example.net"};
    CHECK(host_allowed("10.0.0.1:6060", beyond));
    CHECK(host_allowed("DB7.example.net:6060", beyond));
    CHECK(host_allowed("[2001:db8::1]:6060", beyond));
    CHECK_FALSE(host_allowed("evil.example", beyond));

    CHECK(status_of("GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n") == 403);
    CHECK(status_of("POST /pprof/conf HTTP/1.1\r\nHost: 127.0.0.1:1\r\n"
                    "Origin: http://evil.example\r\n\r\n") == 403);
    CHECK(status_of("POST /pprof/conf HTTP/1.1\r\nHost: 127.0.0.1:1\r\nOrigin: null\r\n\r\n") ==
          403);
    CHECK(status_of("GET /debug/pprof/profile HTTP/1.1\r\nHost: 127.0.0.1:1\r\n"
                    "Sec-Fetch-Site: cross-site\r\n\r\n") == 403);
    CHECK(status_of("POST /pprof/conf HTTP/1.1\r\nHost: 127.0.0.1:1\r\n"
                    "Origin: http://127.0.0.1:1\r\nSec-Fetch-Site: same-origin\r\n\r\n") == 200);
    CHECK(status_of("GET / HTTP/1.0\r\n\r\n") == 200); // HTTP/1.0 may leave Host out
    CHECK(status_of("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", beyond) == 401);
    CHECK(status_of("GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer s3cret\r\n\r\n",
                    beyond) == 200);
}
