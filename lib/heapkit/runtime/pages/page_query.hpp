// SPDX-License-Identifier: MIT
// What the Handler's pages share: reading a query string, and a download's answer (a
// plain-text one: request.hpp).
#pragma once

#include "heapkit/runtime/request.hpp"
#include "heapkit/util/error.hpp"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace heapkit::runtime {

using Query = std::map<std::string, std::string>;

// The longest window a page waits out (?seconds= of a CPU profile, a heap delta): it holds
// a thread of its own this long.
inline constexpr unsigned max_window_seconds = 300;

// '%XX' and '+' decoded; nullopt for a malformed escape.
std::optional<std::string> percent_decode(std::string_view text);

// key=value pairs joined by '&', percent-decoded. An error naming `page` for a malformed
// pair or a key not in `allowed`.
Result<Query> parse_query(std::string_view page, std::string_view query,
                          std::span<const std::string_view> allowed);

// 0|1|false|true, or `fallback` when the key is absent.
Result<bool> query_flag(const Query& query, const std::string& key, bool fallback);
// A whole number in [low, high], or `fallback` when the key is absent.
Result<unsigned> query_number(const Query& query, const std::string& key, unsigned fallback,
                              unsigned low, unsigned high);

// Go's debug=N: debug=0 (or none) is the gzipped protobuf every pprof page serves; other
// values ask for Go's legacy text forms, which are not served: the error says so and
// where the text is (`text_instead`).
Result<void> query_debug(const Query& query, std::string_view text_instead);

// A 200 with bytes as they are; `filename` non-empty: offered as a download of that name.
Response binary(std::string body, std::string content_type, std::string_view filename);

} // namespace heapkit::runtime
