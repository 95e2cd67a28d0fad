// SPDX-License-Identifier: MIT
#include "heapkit/runtime/peaks/peak_captures.hpp"

#include "heapkit/util/private_files.hpp"
#include "heapkit/util/text.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace heapkit::runtime {
namespace {

constexpr size_t max_meta_bytes = 4096;

Result<void> write_all(int fd, std::string_view bytes, const std::string& path) {
    while (!bytes.empty()) {
        ssize_t put = ::write(fd, bytes.data(), bytes.size());
        if (put < 0 && errno == EINTR) {
            continue;
        }
        if (put <= 0) {
            return fail("{}: {}", path, put < 0 ? std::strerror(errno) : "nothing written");
        }
        bytes.remove_prefix(static_cast<size_t>(put));
    }
    return {};
}

// `bytes` as directory/name: a hidden temporary of mkstemp's (O_EXCL: never a planted
// link), checked to be a regular file, renamed over the name.
Result<void> write_atomically(const std::string& directory, const std::string& name,
                              std::string_view bytes) {
    std::string temporary = fmt::format("{}/.{}.XXXXXX", directory, name);
    UniqueFd fd(::mkostemp(temporary.data(), O_CLOEXEC));
    if (!fd) {
        return fail("{}: cannot create a file: {}", directory, std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        ::unlink(temporary.c_str());
        return fail("{}: not a regular file", temporary);
    }
    std::string path = directory + "/" + name;
    auto written = write_all(fd.get(), bytes, path);
    if (written && ::rename(temporary.c_str(), path.c_str()) != 0) {
        written = fail("{}: {}", path, std::strerror(errno));
    }
    if (!written) {
        ::unlink(temporary.c_str());
    }
    return written;
}

void put(std::string& out, std::string_view key, const std::optional<uint64_t>& value) {
    if (value) {
        fmt::format_to(std::back_inserter(out), "{} {}\n", key, *value);
    }
}

std::string meta_text(const Capture& capture) {
    std::string out =
        fmt::format("trigger {}\ntime_ms {}\n", trigger_name(capture.trigger), capture.time_ms);
    const MemorySample& s = capture.sample;
    put(out, "allocated", s.allocated);
    put(out, "resident", s.resident);
    put(out, "rss", s.rss);
    put(out, "cgroup_usage", s.cgroup_usage);
    put(out, "cgroup_limit", s.cgroup_limit);
    put(out, "cgroup_high", s.cgroup_high);
    if (s.psi_some_avg10) {
        fmt::format_to(std::back_inserter(out), "psi_some_avg10 {:.2f}\n", *s.psi_some_avg10);
    }
    return out;
}

void read_meta(std::string_view text, Capture& capture) {
    LineCursor lines(text);
    std::map<std::string_view, std::optional<uint64_t>*> fields{
        {"allocated", &capture.sample.allocated},
        {"resident", &capture.sample.resident},
        {"rss", &capture.sample.rss},
        {"cgroup_usage", &capture.sample.cgroup_usage},
        {"cgroup_limit", &capture.sample.cgroup_limit},
        {"cgroup_high", &capture.sample.cgroup_high}};
    while (auto line = lines.next()) {
        size_t space = line->find(' ');
        std::string_view key = line->substr(0, space);
        std::string_view rest = space == std::string_view::npos ? "" : line->substr(space + 1);
        if (key == "time_ms") {
            if (auto value = take_decimal(rest)) {
                capture.time_ms = static_cast<int64_t>(*value);
            }
        } else if (auto field = fields.find(key); field != fields.end()) {
            if (auto value = take_decimal(rest); value && rest.empty()) {
                *field->second = *value;
            }
        }
    }
}

// "PREFIX.PID.SEQ.TRIGGER" of `name` (the extension cut), or nullopt for other files.
std::optional<Capture> parse_stem(std::string_view name, const std::string& prefix) {
    if (!name.starts_with(prefix + ".")) {
        return std::nullopt;
    }
    std::string_view rest = name.substr(prefix.size() + 1);
    Capture capture;
    auto pid = take_decimal(rest);
    if (!pid || !take_char(rest, '.')) {
        return std::nullopt;
    }
    auto seq = take_decimal(rest);
    if (!seq || !take_char(rest, '.')) {
        return std::nullopt;
    }
    auto trigger = trigger_from_name(rest);
    if (!trigger) {
        return std::nullopt;
    }
    capture.stem = std::string(name);
    capture.pid = *pid;
    capture.seq = *seq;
    capture.trigger = *trigger;
    return capture;
}

void remove_capture(const std::string& directory, const Capture& capture) {
    // The .meta first: a capture half deleted is no longer listed.
    auto extensions = capture_extensions();
    std::reverse(extensions.begin(), extensions.end());
    for (const std::string& extension : extensions) {
        ::unlink(fmt::format("{}/{}.{}", directory, capture.stem, extension).c_str());
    }
}

} // namespace

const std::vector<std::string>& capture_extensions() {
    static const std::vector<std::string> extensions{"heap", "stats.json", "smaps", "memory.stat",
                                                     "meta"};
    return extensions;
}

Result<void> check_capture_prefix(const std::string& prefix) {
    bool ok = !prefix.empty() && prefix.size() <= 64 &&
              std::all_of(prefix.begin(), prefix.end(), [](char c) {
                  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '+';
              });
    if (!ok) {
        return fail("prefix '{}': expected 1 to 64 letters, digits, '_', '-' or '+'", prefix);
    }
    return {};
}

std::string capture_stem(const std::string& prefix, uint64_t pid, uint64_t seq, Trigger trigger) {
    return fmt::format("{}.{}.{}.{}", prefix, pid, seq, trigger_name(trigger));
}

Result<Capture> write_capture(const std::string& directory, const std::string& stem,
                              const CaptureFiles& files, Trigger trigger,
                              const MemorySample& sample, int64_t time_ms) {
    Capture capture;
    capture.stem = stem;
    capture.trigger = trigger;
    capture.time_ms = time_ms;
    capture.sample = sample;
    capture.has_memory_stat = !files.memory_stat.empty();
    std::vector<std::pair<std::string, std::string_view>> parts{
        {"heap", files.heap}, {"stats.json", files.stats_json}, {"smaps", files.smaps}};
    if (capture.has_memory_stat) {
        parts.emplace_back("memory.stat", files.memory_stat);
    }
    std::string meta = meta_text(capture);
    parts.emplace_back("meta", meta);
    for (const auto& [extension, bytes] : parts) {
        if (auto written = write_atomically(directory, stem + "." + extension, bytes); !written) {
            remove_capture(directory, capture);
            return tl::unexpected(written.error());
        }
        capture.bytes += bytes.size();
    }
    return capture;
}

std::vector<Capture> list_captures(const std::string& directory, const std::string& prefix) {
    std::vector<Capture> captures;
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(directory.c_str()), ::closedir);
    if (!dir) {
        return captures;
    }
    std::map<std::string, uint64_t> sizes; // stem -> bytes of its files
    std::set<std::string> with_memory_stat;
    std::vector<std::string> metas;
    int dir_fd = ::dirfd(dir.get());
    while (const dirent* entry = ::readdir(dir.get())) {
        std::string_view name = entry->d_name;
        for (const std::string& extension : capture_extensions()) {
            std::string suffix = "." + extension;
            if (name.size() <= suffix.size() || !name.ends_with(suffix) || name[0] == '.') {
                continue;
            }
            std::string stem(name.substr(0, name.size() - suffix.size()));
            struct stat st {};
            if (::fstatat(dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                !S_ISREG(st.st_mode)) {
                break;
            }
            sizes[stem] += static_cast<uint64_t>(st.st_size);
            if (extension == "meta") {
                metas.push_back(stem);
            } else if (extension == "memory.stat") {
                with_memory_stat.insert(stem);
            }
            break;
        }
    }
    for (const std::string& stem : metas) {
        auto capture = parse_stem(stem, prefix);
        if (!capture) {
            continue;
        }
        auto text = read_regular_file(fmt::format("{}/{}.meta", directory, stem), max_meta_bytes);
        if (!text) {
            continue;
        }
        read_meta(*text, *capture);
        capture->bytes = sizes[stem];
        capture->has_memory_stat = with_memory_stat.count(stem) != 0;
        captures.push_back(std::move(*capture));
    }
    std::sort(captures.begin(), captures.end(), [](const Capture& a, const Capture& b) {
        return std::tie(a.time_ms, a.pid, a.seq) < std::tie(b.time_ms, b.pid, b.seq);
    });
    return captures;
}

unsigned apply_retention(const std::string& directory, const std::string& prefix,
                         const Retention& retention) {
    std::vector<Capture> captures = list_captures(directory, prefix);
    auto value = [&](const Capture& c) {
        return (retention.by_rss ? c.sample.rss : c.sample.allocated).value_or(0);
    };
    std::set<std::string> protect;
    const Capture* highest = nullptr;
    const Capture* last_danger = nullptr;
    for (const Capture& capture : captures) {
        if (highest == nullptr || value(capture) >= value(*highest)) {
            highest = &capture;
        }
        if (capture.trigger == Trigger::danger) {
            last_danger = &capture;
        }
    }
    for (const Capture* kept : {highest, last_danger}) {
        if (kept != nullptr) {
            protect.insert(kept->stem);
        }
    }
    uint64_t total = 0;
    for (const Capture& capture : captures) {
        total += capture.bytes;
    }
    unsigned deleted = 0;
    size_t unprotected_left = 0;
    for (const Capture& capture : captures) {
        unprotected_left += protect.count(capture.stem) == 0 ? 1 : 0;
    }
    // Oldest first: beyond the last K, or while the total is over the cap.
    for (const Capture& capture : captures) {
        if (protect.count(capture.stem) != 0) {
            continue;
        }
        bool too_many = unprotected_left + protect.size() > retention.keep;
        if (!too_many && total <= retention.max_bytes) {
            break;
        }
        remove_capture(directory, capture);
        total -= capture.bytes;
        --unprotected_left;
        ++deleted;
    }
    return deleted;
}

unsigned remove_stale_temporaries(const std::string& directory, const std::string& prefix) {
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(directory.c_str()), ::closedir);
    if (!dir) {
        return 0;
    }
    std::vector<std::string> stale;
    std::string start = "." + prefix + ".";
    while (const dirent* entry = ::readdir(dir.get())) {
        std::string_view name = entry->d_name;
        if (!name.starts_with(start)) {
            continue;
        }
        std::string_view rest = name.substr(start.size());
        auto pid = take_decimal(rest);
        if (!pid || !take_char(rest, '.') || *pid > static_cast<uint64_t>(INT32_MAX)) {
            continue;
        }
        // Only a process that is gone: another one's temporary may be a capture under way.
        bool gone = ::kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH;
        struct stat st {};
        if (gone && ::fstatat(::dirfd(dir.get()), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode)) {
            stale.emplace_back(name);
        }
    }
    for (const std::string& name : stale) {
        ::unlinkat(::dirfd(dir.get()), name.c_str(), 0);
    }
    return static_cast<unsigned>(stale.size());
}

std::optional<uint64_t> free_bytes(const std::string& directory) {
    struct statvfs vfs {};
    if (::statvfs(directory.c_str(), &vfs) != 0) {
        return std::nullopt;
    }
    return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

} // namespace heapkit::runtime
