// SPDX-License-Identifier: MIT
#include "heapkit/report/source_excerpts.hpp"

#include "heapkit/report/report_data.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace heapkit {
namespace {

// Where a file named `name` may be: as named when absolute; else under the working
// directory, each module's directory and the two above it (a build directory, where
// the compiler ran, is often the program's or an ancestor of it).
std::vector<std::string> candidates(const SourceFile& file) {
    std::filesystem::path name(file.name);
    if (name.is_absolute()) {
        return {file.name};
    }
    std::vector<std::string> paths{file.name};
    for (const std::string& dir : file.module_dirs) {
        std::filesystem::path at(dir);
        for (int up = 0; up < 3 && !at.empty(); ++up) {
            paths.push_back((at / name).lexically_normal().string());
            at = at.parent_path();
        }
    }
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    return paths;
}

// A regular file's bytes, or nullopt: nothing that is not a regular file (a FIFO would
// block, a device never end) and nothing larger than `max_bytes` is read.
std::optional<std::string> read_regular(const std::string& path, size_t max_bytes) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    struct stat st {};
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<uint64_t>(st.st_size) > max_bytes) {
        return std::nullopt;
    }
    std::string bytes(static_cast<size_t>(st.st_size), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t got = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            break; // shorter than fstat said: what was read
        }
        done += static_cast<size_t>(got);
    }
    bytes.resize(done);
    return bytes;
}

// The ranges of lines to show, merged: [first, last], 1-based.
std::vector<std::pair<uint32_t, uint32_t>> ranges_of(const std::set<uint32_t>& lines,
                                                     uint32_t context) {
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    for (uint32_t line : lines) {
        uint32_t first = line > context ? line - context : 1;
        if (!ranges.empty() && first <= ranges.back().second + 1) {
            ranges.back().second = std::max(ranges.back().second, line + context);
        } else {
            ranges.emplace_back(first, line + context);
        }
    }
    return ranges;
}

// Appends the excerpts of `text` as JSON ([[first, [lines]], ...]); returns the bytes
// of source text taken.
size_t append_ranges(std::string& out, std::string_view text, const SourceFile& file,
                     const ExcerptLimits& limits) {
    std::vector<std::string_view> lines;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        end = end == std::string_view::npos ? text.size() : end;
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    size_t taken = 0;
    out += "[";
    bool first_range = true;
    for (auto [first, last] : ranges_of(file.lines, limits.context)) {
        if (first > lines.size()) {
            break;
        }
        last = std::min<uint32_t>(last, static_cast<uint32_t>(lines.size()));
        out += first_range ? "" : ",";
        first_range = false;
        fmt::format_to(std::back_inserter(out), "[{},[", first);
        for (uint32_t l = first; l <= last; ++l) {
            std::string_view line = lines[l - 1].substr(0, limits.max_line_bytes);
            if (!line.empty() && line.back() == '\r') {
                line.remove_suffix(1);
            }
            out += l > first ? "," : "";
            append_json_string(out, line);
            taken += line.size();
        }
        out += "]]";
    }
    out += "]";
    return taken;
}

} // namespace

void append_source_excerpts(std::string& out, const std::map<uint32_t, SourceFile>& files,
                            const ExcerptLimits& limits) {
    std::string found = "\"sourceFiles\":[";
    std::string missing = "\"sourceMissing\":[";
    size_t total = 0;
    for (const auto& [id, file] : files) {
        std::vector<std::string> paths = candidates(file);
        std::optional<std::string> text;
        std::string read_from;
        for (const std::string& path : paths) {
            if (total < limits.max_total_bytes &&
                (text = read_regular(path, limits.max_file_bytes))) {
                read_from = path;
                break;
            }
        }
        if (!text) {
            missing += missing.back() == '[' ? "" : ",";
            fmt::format_to(std::back_inserter(missing), "{{\"file\":{},\"looked\":[", id);
            for (size_t p = 0; p < paths.size(); ++p) {
                missing += p > 0 ? "," : "";
                append_json_string(missing, paths[p]);
            }
            missing += total < limits.max_total_bytes ? "]}" : "],\"full\":true}";
            continue;
        }
        found += found.back() == '[' ? "\n" : ",\n";
        fmt::format_to(std::back_inserter(found), "{{\"file\":{},\"path\":", id);
        append_json_string(found, read_from);
        found += ",\"ranges\":";
        total += append_ranges(found, *text, file, limits);
        found += "}";
    }
    out += found + "],\n" + missing + "],\n";
}

} // namespace heapkit
