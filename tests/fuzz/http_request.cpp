// SPDX-License-Identifier: MIT
// Any bytes as what a client sends on one connection, fed to the server's request parser
// (runtime/http/request_parser.cpp) in pieces as a socket would give them, with the
// admission rules of a server beyond loopback with a token. The first byte chooses where
// the pieces are cut. Every answer must be one well-formed status line; a request that
// gets through must have a path and a method.
#include "heapkit/runtime/http/admission.hpp"
#include "heapkit/runtime/http/request_parser.hpp"
#include "heapkit/runtime/http/response_bytes.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace heapkit::runtime;

namespace {

void require(bool condition) {
    if (!condition) {
        std::abort();
    }
}

void check_answer(const Response& response) {
    std::string wire = http::response_bytes(response, false, true);
    require(wire.starts_with("HTTP/1.1 ") && response.status >= 400 && response.status < 600);
    require(wire.find("\nHTTP/1.1 ") == std::string::npos);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return 0;
    }
    size_t piece = 1 + data[0] % 64;
    std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    http::AdmissionRules rules{"s3cret", true, "db7.example.net"};
    http::ParserLimits limits{512, 16, 1024}; // small, so that the fuzzer reaches them
    http::RequestParser parser(limits, [&](const Request& head, std::optional<uint64_t>) {
        return http::refuse_head(head, rules);
    });
    std::string unparsed;
    for (size_t at = 0; at < bytes.size(); at += piece) {
        unparsed.append(bytes.substr(at, piece));
        for (;;) {
            size_t used = parser.feed(unparsed);
            require(used <= unparsed.size());
            unparsed.erase(0, used);
            if (parser.state() == http::RequestParser::State::refused) {
                check_answer(parser.take_refusal());
                return 0;
            }
            if (parser.state() != http::RequestParser::State::complete) {
                break;
            }
            Request request = parser.take_request();
            require(!request.method.empty() && request.path.starts_with('/'));
            require(request.body.size() <= limits.max_body);
            if (!parser.keep_alive()) {
                return 0;
            }
            parser.next();
        }
    }
    parser.end_of_input();
    if (parser.state() == http::RequestParser::State::refused) {
        check_answer(parser.take_refusal());
    }
    return 0;
}
