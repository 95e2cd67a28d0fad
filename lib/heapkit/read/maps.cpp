// SPDX-License-Identifier: MIT
#include "heapkit/read/maps.hpp"

#include "heapkit/util/text.hpp"

#include <string>

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

// The path as the file system has it. The kernel writes a maps path with seq_path(...,
// "\n") (fs/proc/task_mmu.c), whose mangle_path turns each newline into the octal escape
// "\012" and leaves every other byte, a backslash included, as it is: so "\012" is the
// one sequence to undo. (A name spelling "\012" itself reads as a newline: the kernel's
// text cannot tell the two apart.)
std::string unescaped_path(std::string_view text) {
    constexpr std::string_view newline = "\\012";
    std::string path;
    path.reserve(text.size());
    for (size_t at; (at = text.find(newline)) != std::string_view::npos;) {
        path += text.substr(0, at);
        path += '\n';
        text.remove_prefix(at + newline.size());
    }
    path += text;
    return path;
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
    entry.path = unescaped_path(text);
    return entry;
}

} // namespace heapkit
