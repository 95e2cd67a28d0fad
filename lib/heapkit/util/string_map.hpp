// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace heapkit {

// Hashes std::string and std::string_view alike, so a map keyed by std::string can be
// searched with a view without building a string for every lookup.
struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

// A std::string-keyed map whose find() takes a std::string_view.
template <typename Value>
using StringMap = std::unordered_map<std::string, Value, StringHash, std::equal_to<>>;

} // namespace heapkit
