// SPDX-License-Identifier: MIT
#include "heapkit/runtime/http/request_parser.hpp"

#include "heapkit/runtime/request.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace heapkit::runtime::http {
namespace {

// RFC 9110's tchar: what a field name is made of. http-parser (not built strict) lets
// "Host :" through; a name with a space is how requests are smuggled past a proxy.
bool is_token(std::string_view name) {
    static constexpr std::string_view extra = "!#$%&'*+-.^_`|~";
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
               extra.find(c) != std::string_view::npos;
    });
}

std::string lower(std::string text) {
    for (char& c : text) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c + 32);
        }
    }
    return text;
}

// Fields a request may carry once: two Hosts (or tokens, origins) could be read one way
// here and another way by a proxy in front.
bool singleton(std::string_view name) {
    return name == "host" || name == "authorization" || name == "origin" ||
           name == "sec-fetch-site";
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = static_cast<char>(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// A path's %XX decoded ('+' is a plus in a path); nullopt for a bad escape or a NUL.
std::optional<std::string> decode_path(std::string_view path) {
    std::string decoded;
    for (size_t i = 0; i < path.size(); ++i) {
        if (path[i] != '%') {
            decoded += path[i];
            continue;
        }
        int high = i + 2 < path.size() ? hex_digit(path[i + 1]) : -1;
        int low = high >= 0 ? hex_digit(path[i + 2]) : -1;
        if (low < 0 || (high == 0 && low == 0)) {
            return std::nullopt;
        }
        decoded += static_cast<char>(high * 16 + low);
        i += 2;
    }
    return decoded;
}

RequestParser& self(http_parser* parser) {
    return *static_cast<RequestParser*>(parser->data);
}

} // namespace

RequestParser::RequestParser(const ParserLimits& limits, HeadCheck check)
    : m_limits(limits)
    , m_check(std::move(check)) {
    http_parser_init(&m_parser, HTTP_REQUEST);
    m_parser.data = this;
}

size_t RequestParser::feed(std::string_view bytes) {
    if (m_state != State::reading || bytes.empty()) {
        return 0;
    }
    size_t used = http_parser_execute(&m_parser, &callbacks(), bytes.data(), bytes.size());
    http_errno error = HTTP_PARSER_ERRNO(&m_parser);
    if (m_state == State::reading && error != HPE_OK && error != HPE_PAUSED) {
        int status = error == HPE_HEADER_OVERFLOW ? 431 : 400;
        refuse(status, fmt::format("malformed request: {}", http_errno_description(error)));
    }
    if (m_parser.upgrade) {
        m_keep_alive = false; // what follows is another protocol's, not a request
    }
    return m_state == State::refused ? bytes.size() : used;
}

void RequestParser::end_of_input() {
    if (in_request()) {
        refuse(400, "the request ended early");
    }
}

Request RequestParser::take_request() {
    return std::move(m_request);
}

Response RequestParser::take_refusal() {
    Response refusal = std::move(*m_refusal);
    m_refusal.reset();
    return refusal;
}

void RequestParser::next() {
    m_state = State::reading;
    m_started = false;
    m_request = Request{};
    http_parser_pause(&m_parser, 0);
}

int RequestParser::refuse(int status, std::string why) {
    if (!m_refusal) {
        m_refusal = text(status, std::move(why));
    }
    m_state = State::refused;
    m_keep_alive = false;
    return 1; // stops http-parser
}

bool RequestParser::count_head_bytes(size_t length) {
    m_head_bytes += length;
    return m_head_bytes <= m_limits.max_header_bytes;
}

void RequestParser::end_header() {
    if (!m_in_value) {
        return;
    }
    m_in_value = false;
    std::string name = lower(std::move(m_field));
    m_field.clear();
    auto [at, inserted] = m_request.headers.try_emplace(name, m_value);
    if (!inserted && singleton(name)) {
        m_repeated = name;
    } else if (!inserted) {
        at->second += ", " + m_value; // RFC 9110 5.3: repeated fields are one list
    }
    m_value.clear();
}

std::optional<Response> RequestParser::finish_head() {
    end_header();
    for (const auto& [name, value] : m_request.headers) {
        if (!is_token(name)) {
            return text(400, "malformed request: a header name that is not a token");
        }
    }
    if (!m_repeated.empty()) {
        return text(400, fmt::format("malformed request: more than one {} header", m_repeated));
    }
    bool http11 = m_parser.http_major == 1 && m_parser.http_minor >= 1;
    if (http11 && !m_request.headers.contains("host")) {
        return text(400, "malformed request: HTTP/1.1 without Host");
    }
    // Origin form only ("/path?query"): no proxy's absolute URLs, no "*".
    if (m_target.empty() || m_target.front() != '/') {
        return text(400, "malformed request: the target must be a path");
    }
    std::string_view target = m_target;
    target = target.substr(0, target.find('#'));
    size_t question = target.find('?');
    auto path = decode_path(target.substr(0, question));
    if (!path) {
        return text(400, "malformed request: a bad %-escape in the path");
    }
    m_request.method = http_method_str(static_cast<http_method>(m_parser.method));
    m_request.path = std::move(*path);
    if (question != std::string_view::npos) {
        m_request.query = std::string(target.substr(question + 1));
    }
    std::optional<uint64_t> declared;
    if (m_parser.flags & F_CONTENTLENGTH) {
        declared = m_parser.content_length;
    }
    return m_check ? m_check(m_request, declared) : std::nullopt;
}

int RequestParser::on_message_begin(http_parser* parser) {
    RequestParser& it = self(parser);
    it.m_started = true;
    it.m_head_bytes = 0;
    it.m_header_count = 0;
    it.m_target.clear();
    it.m_field.clear();
    it.m_value.clear();
    it.m_in_value = false;
    it.m_repeated.clear();
    return 0;
}

int RequestParser::on_url(http_parser* parser, const char* at, size_t length) {
    RequestParser& it = self(parser);
    it.m_target.append(at, length);
    if (!it.count_head_bytes(length)) {
        return it.refuse(414,
                         fmt::format("request target over {} bytes", it.m_limits.max_header_bytes));
    }
    return 0;
}

int RequestParser::on_header_field(http_parser* parser, const char* at, size_t length) {
    RequestParser& it = self(parser);
    if (it.m_in_value || it.m_header_count == 0) {
        it.end_header();
        if (++it.m_header_count > it.m_limits.max_headers) {
            return it.refuse(431,
                             fmt::format("more than {} header fields", it.m_limits.max_headers));
        }
    }
    it.m_field.append(at, length);
    if (!it.count_head_bytes(length + (it.m_field.size() == length ? 4 : 0))) {
        return it.refuse(431, fmt::format("request line and headers over {} bytes",
                                          it.m_limits.max_header_bytes));
    }
    return 0;
}

int RequestParser::on_header_value(http_parser* parser, const char* at, size_t length) {
    RequestParser& it = self(parser);
    it.m_in_value = true;
    it.m_value.append(at, length);
    if (!it.count_head_bytes(length)) {
        return it.refuse(431, fmt::format("request line and headers over {} bytes",
                                          it.m_limits.max_header_bytes));
    }
    return 0;
}

// (Here 1 and 2 mean "no body" and "upgrade" to http-parser: a refusal returns -1.)
int RequestParser::on_headers_complete(http_parser* parser) {
    RequestParser& it = self(parser);
    if (auto refusal = it.finish_head()) {
        it.m_refusal = std::move(*refusal);
        it.refuse(it.m_refusal->status, "");
        return -1;
    }
    if ((parser->flags & F_CONTENTLENGTH) && parser->content_length > it.m_limits.max_body) {
        it.refuse(413, fmt::format("request body over {} bytes", it.m_limits.max_body));
        return -1;
    }
    return 0;
}

int RequestParser::on_body(http_parser* parser, const char* at, size_t length) {
    RequestParser& it = self(parser);
    if (it.m_request.body.size() + length > it.m_limits.max_body) {
        return it.refuse(413, fmt::format("request body over {} bytes", it.m_limits.max_body));
    }
    it.m_request.body.append(at, length);
    return 0;
}

int RequestParser::on_message_complete(http_parser* parser) {
    RequestParser& it = self(parser);
    it.m_state = State::complete;
    it.m_keep_alive = http_should_keep_alive(parser) != 0 && !parser->upgrade;
    // The next request (pipelined) waits until this one is answered.
    http_parser_pause(parser, 1);
    return 0;
}

const http_parser_settings& RequestParser::callbacks() {
    static const http_parser_settings table = [] {
        http_parser_settings s;
        http_parser_settings_init(&s);
        s.on_message_begin = on_message_begin;
        s.on_url = on_url;
        s.on_header_field = on_header_field;
        s.on_header_value = on_header_value;
        s.on_headers_complete = on_headers_complete;
        s.on_body = on_body;
        s.on_message_complete = on_message_complete;
        return s;
    }();
    return table;
}

} // namespace heapkit::runtime::http
