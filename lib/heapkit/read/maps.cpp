// SPDX-License-Identifier: MIT
#include "heapkit/read/maps.hpp"

#include "heapkit/util/text.hpp"

namespace heapkit {
namespace {

// Skips one whitespace-separated field; false when none is there.
bool skip_field(std::string_view& text) {
    skip_spaces(text);
    size_t end = text.find_first_of(" \t");
    if (text.empty() || end == 0) {
        return false;
    }
    text.remove_prefix(end == std::string_view::npos ? text.size() : end);
    return true;
}

} // namespace

Result<MapEntry> parse_maps_line(std::string_view line, std::string_view where) {
    MapEntry entry;
    std::string_view text = line;
    auto start = take_hex(text);
    if (!start || !take_literal(text, "-")) {
        return fail("{}: expected a maps line \"start-end perms offset dev inode path\"", where);
    }
    auto end = take_hex(text);
    skip_spaces(text);
    std::string_view perms = text.substr(0, 4);
    if (!end || perms.size() != 4 || *end < *start) {
        return fail("{}: malformed address range or permissions in maps line", where);
    }
    text.remove_prefix(4);
    skip_spaces(text);
    auto offset = take_hex(text);
    if (!offset || !skip_field(text) || !skip_field(text)) {
        return fail("{}: malformed offset, device or inode in maps line", where);
    }
    skip_spaces(text);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
        text.remove_suffix(1);
    }
    constexpr std::string_view deleted = " (deleted)";
    if (text.size() > deleted.size() && text.ends_with(deleted)) {
        text.remove_suffix(deleted.size());
        entry.deleted = true;
    }
    entry.start = *start;
    entry.end = *end;
    entry.file_offset = *offset;
    entry.executable = perms[2] == 'x';
    entry.path = std::string(text);
    return entry;
}

} // namespace heapkit
