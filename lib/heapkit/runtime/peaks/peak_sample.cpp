// SPDX-License-Identifier: MIT
#include "heapkit/runtime/peaks/peak_sample.hpp"

#include "heapkit/runtime/telemetry.hpp"
#include "heapkit/util/input.hpp"
#include "heapkit/util/text.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

// A small file into `buffer` (its first bytes; these files are a line or a few), without
// allocating: called every interval. The descriptor lives for this call only.
std::optional<std::string_view> read_small(const char* path, char (&buffer)[512]) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        return std::nullopt;
    }
    ssize_t got;
    do {
        got = ::read(fd, buffer, sizeof buffer);
    } while (got < 0 && errno == EINTR);
    ::close(fd);
    if (got < 0) {
        return std::nullopt;
    }
    return std::string_view(buffer, static_cast<size_t>(got));
}

std::optional<std::string_view> read_in(const CgroupFiles& cgroup, const char* file,
                                        char (&buffer)[512]) {
    char path[4096];
    int n = std::snprintf(path, sizeof path, "%s/%s", cgroup.directory.c_str(), file);
    if (n < 0 || static_cast<size_t>(n) >= sizeof path) {
        return std::nullopt;
    }
    return read_small(path, buffer);
}

std::optional<uint64_t> value_in(const CgroupFiles& cgroup, const char* file) {
    char buffer[512];
    auto text = read_in(cgroup, file, buffer);
    return text ? parse_memory_value(*text) : std::nullopt;
}

std::optional<uint64_t> resident_bytes() {
    char buffer[512];
    auto text = read_small("/proc/self/statm", buffer);
    if (!text) {
        return std::nullopt;
    }
    std::string_view rest = *text;
    auto size = take_decimal(rest);
    skip_spaces(rest);
    auto resident = take_decimal(rest);
    if (!size || !resident) {
        return std::nullopt;
    }
    return *resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// v1's line for the memory controller: "4:memory:/path" (the controller list may hold
// others, "4:cpu,memory:/path").
std::optional<std::string> cgroup_v1_memory_path(std::string_view text) {
    LineCursor lines(text);
    while (auto line = lines.next()) {
        size_t first = line->find(':');
        size_t second = first == std::string_view::npos ? first : line->find(':', first + 1);
        if (second == std::string_view::npos) {
            continue;
        }
        std::string_view controllers = line->substr(first + 1, second - first - 1);
        while (!controllers.empty()) {
            size_t comma = controllers.find(',');
            if (controllers.substr(0, comma) == "memory") {
                return std::string(line->substr(second + 1));
            }
            controllers.remove_prefix(comma == std::string_view::npos ? controllers.size()
                                                                      : comma + 1);
        }
    }
    return std::nullopt;
}

} // namespace

CgroupFiles find_memory_cgroup() {
    auto input = read_input("/proc/self/cgroup");
    if (!input) {
        return {};
    }
    if (auto path = cgroup_v2_path(input->bytes)) {
        std::string directory = "/sys/fs/cgroup" + (*path == "/" ? std::string() : *path);
        struct stat st {};
        if (::stat((directory + "/memory.current").c_str(), &st) == 0) {
            return {CgroupFiles::Version::v2, directory};
        }
    }
    if (auto path = cgroup_v1_memory_path(input->bytes)) {
        // Inside a cgroup namespace the path may not exist under the mount: its root is ours.
        for (std::string directory :
             {"/sys/fs/cgroup/memory" + *path, std::string("/sys/fs/cgroup/memory")}) {
            if (is_directory(directory)) {
                return {CgroupFiles::Version::v1, directory};
            }
        }
    }
    return {};
}

std::optional<double> parse_psi_some_avg10(std::string_view text) {
    LineCursor lines(text);
    while (auto line = lines.next()) {
        std::string_view rest = *line;
        if (!take_literal(rest, "some avg10=")) {
            continue;
        }
        double value = 0;
        auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
        if (ec != std::errc() || end == rest.data()) {
            return std::nullopt;
        }
        return value;
    }
    return std::nullopt;
}

std::optional<uint64_t> parse_events_field(std::string_view text, std::string_view field) {
    LineCursor lines(text);
    while (auto line = lines.next()) {
        std::string_view rest = *line;
        if (take_literal(rest, field) && take_char(rest, ' ')) {
            auto value = take_decimal(rest);
            return value && rest.empty() ? value : std::nullopt;
        }
    }
    return std::nullopt;
}

std::optional<uint64_t> limit_or_none(std::optional<uint64_t> value) {
    return value && *value < (uint64_t{1} << 60) ? value : std::nullopt;
}

MemorySample read_memory_sample(const Mallctl* mallctl, const CgroupFiles& cgroup) {
    MemorySample sample;
    sample.rss = resident_bytes();
    // jemalloc caches its statistics; writing "epoch" refreshes them.
    if (mallctl != nullptr && mallctl->write<uint64_t>("epoch", 1)) {
        if (auto value = mallctl->read<size_t>("stats.allocated")) {
            sample.allocated = *value;
        }
        if (auto value = mallctl->read<size_t>("stats.resident")) {
            sample.resident = *value;
        }
    }
    char buffer[512];
    switch (cgroup.version) {
    case CgroupFiles::Version::v2:
        sample.cgroup_usage = value_in(cgroup, "memory.current");
        sample.cgroup_limit = limit_or_none(value_in(cgroup, "memory.max"));
        sample.cgroup_high = limit_or_none(value_in(cgroup, "memory.high"));
        if (auto text = read_in(cgroup, "memory.events", buffer)) {
            sample.cgroup_oom_kills = parse_events_field(*text, "oom_kill");
        }
        if (auto text = read_in(cgroup, "memory.pressure", buffer)) {
            sample.psi_some_avg10 = parse_psi_some_avg10(*text);
        }
        break;
    case CgroupFiles::Version::v1:
        sample.cgroup_usage = value_in(cgroup, "memory.usage_in_bytes");
        sample.cgroup_limit = limit_or_none(value_in(cgroup, "memory.limit_in_bytes"));
        break;
    case CgroupFiles::Version::none:
        break;
    }
    if (!sample.psi_some_avg10) {
        if (auto text = read_small("/proc/pressure/memory", buffer)) {
            sample.psi_some_avg10 = parse_psi_some_avg10(*text);
        }
    }
    return sample;
}

} // namespace heapkit::runtime
