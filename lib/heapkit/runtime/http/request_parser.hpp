// SPDX-License-Identifier: MIT
// One connection's requests, from bytes to heapkit's Request: nodejs' http-parser does the
// HTTP/1.1 syntax (strict about framing: conflicting or negative Content-Length, length
// with chunked, bad chunk sizes); this adds the limits and the checks made once the head
// is in. No socket here: the fuzz target feeds it bytes (tests/fuzz/http_request.cpp).
#pragma once

#include "heapkit/runtime/request.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <http_parser.h>
#include <optional>
#include <string>
#include <string_view>

namespace heapkit::runtime::http {

struct ParserLimits {
    size_t max_header_bytes = 16 * 1024; // request line and headers: more is 431 (414 the URL)
    size_t max_headers = 64;             // header fields: more is 431
    size_t max_body = 1 << 20;           // more is 413, declared or chunked
};

// Asked once a request's head is in, before its body is read: an answer refuses it.
// `declared_length` is its Content-Length, if it has one.
using HeadCheck = std::function<std::optional<Response>(const Request& head,
                                                        std::optional<uint64_t> declared_length)>;

class RequestParser {
public:
    enum class State {
        reading,  // wants more bytes
        complete, // a request is ready (take_request); nothing more is parsed until next()
        refused,  // answer with take_refusal() and close the connection
    };

    RequestParser(const ParserLimits& limits, HeadCheck check);
    RequestParser(const RequestParser&) = delete;
    RequestParser& operator=(const RequestParser&) = delete;

    // Parses from `bytes`; returns how many it used (fewer once a request is complete or
    // refused: the rest belongs to a later request, or to nobody).
    size_t feed(std::string_view bytes);
    // The peer closed its side: a request cut short is refused.
    void end_of_input();
    State state() const { return m_state; }
    // True from a request's first byte until it is complete: its head deadline runs.
    bool in_request() const { return m_started && m_state == State::reading; }

    Request take_request();
    Response take_refusal();
    // Whether the connection may carry another request after this one's answer.
    bool keep_alive() const { return m_keep_alive; }
    // Ready for the connection's next request.
    void next();

private:
    static const http_parser_settings& callbacks();
    static int on_message_begin(http_parser* parser);
    static int on_url(http_parser* parser, const char* at, size_t length);
    static int on_header_field(http_parser* parser, const char* at, size_t length);
    static int on_header_value(http_parser* parser, const char* at, size_t length);
    static int on_headers_complete(http_parser* parser);
    static int on_body(http_parser* parser, const char* at, size_t length);
    static int on_message_complete(http_parser* parser);

    int refuse(int status, std::string why);
    bool count_head_bytes(size_t length);
    void end_header();
    std::optional<Response> finish_head();

    ParserLimits m_limits;
    HeadCheck m_check;
    http_parser m_parser{};
    State m_state = State::reading;
    bool m_started = false;
    bool m_keep_alive = false;
    size_t m_head_bytes = 0;
    size_t m_header_count = 0;
    std::string m_target;
    std::string m_field;
    std::string m_value;
    bool m_in_value = false;
    std::string m_repeated; // a field that may come once and came again
    Request m_request;
    std::optional<Response> m_refusal;
};

} // namespace heapkit::runtime::http
