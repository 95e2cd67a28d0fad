// SPDX-License-Identifier: MIT
#include "heapkit/runtime/pages/page_query.hpp"

#include "heapkit/util/text.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>

namespace heapkit::runtime {

std::optional<std::string> percent_decode(std::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%') {
            std::string_view digits = text.substr(i + 1, 2);
            auto value = digits.size() == 2 ? take_number(digits, 16) : std::nullopt;
            if (!value || !digits.empty()) {
                return std::nullopt;
            }
            out += static_cast<char>(*value);
            i += 2;
        } else {
            out += text[i] == '+' ? ' ' : text[i];
        }
    }
    return out;
}

Result<Query> parse_query(std::string_view page, std::string_view query,
                          std::span<const std::string_view> allowed) {
    Query pairs;
    while (!query.empty()) {
        size_t amp = query.find('&');
        std::string_view pair = query.substr(0, amp);
        query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
        size_t equals = pair.find('=');
        auto key = percent_decode(pair.substr(0, equals));
        auto value =
            percent_decode(equals == std::string_view::npos ? "" : pair.substr(equals + 1));
        if (!key || !value) {
            return fail("{}: malformed %-escape in '{}'", page, pair);
        }
        if (std::find(allowed.begin(), allowed.end(), *key) == allowed.end()) {
            return fail("{} takes {}; not '{}'", page, fmt::join(allowed, ", "), *key);
        }
        pairs[*key] = *value;
    }
    return pairs;
}

Result<bool> query_flag(const Query& query, const std::string& key, bool fallback) {
    auto it = query.find(key);
    if (it == query.end()) {
        return fallback;
    }
    if (it->second == "1" || it->second == "true") {
        return true;
    }
    if (it->second == "0" || it->second == "false") {
        return false;
    }
    return fail("{}={}: expected 0 or 1", key, it->second);
}

Result<void> query_debug(const Query& query, std::string_view text_instead) {
    auto it = query.find("debug");
    if (it == query.end() || it->second == "0") {
        return {};
    }
    return fail("debug={}: only debug=0 is served, the gzipped protobuf (the default, what go "
                "tool pprof reads); Go's text forms (debug=1, debug=2) are not. {}",
                it->second, text_instead);
}

Result<unsigned> query_number(const Query& query, const std::string& key, unsigned fallback,
                              unsigned low, unsigned high) {
    auto it = query.find(key);
    if (it == query.end()) {
        return fallback;
    }
    unsigned value = 0;
    const std::string& text = it->second;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) {
        return fail("{}={}: expected a whole number from {} to {}", key, text, low, high);
    }
    return value;
}

Response binary(std::string body, std::string content_type, std::string_view filename) {
    Response response;
    response.body = std::move(body);
    response.content_type = std::move(content_type);
    if (!filename.empty()) {
        response.headers["Content-Disposition"] =
            fmt::format("attachment; filename=\"{}\"", filename);
    }
    return response;
}

} // namespace heapkit::runtime
