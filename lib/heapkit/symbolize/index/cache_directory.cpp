// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/cache_directory.hpp"

#include "heapkit/symbolize/options.hpp"
#include "heapkit/util/private_files.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace heapkit {

namespace fs = std::filesystem;

Result<void> check_cache_directory(const std::string& directory) {
    auto checked = check_private_directory(directory);
    if (checked || checked.error().system_error == ENOENT) {
        return {};
    }
    return fail("cache not used: {}; make it yours alone (chown, chmod go-w) or set "
                "HEAPKIT_CACHE_DIR to a directory of your own (or pass --no-cache)",
                checked.error().message);
}

namespace {

// `directory`, made with its parents (mode 0700) if missing, when this process's
// effective user may create files in it (and, with `own`, owns it): the error otherwise.
std::optional<std::string> unusable(const std::string& directory, bool own) {
    std::error_code made; // what stat() then finds is what counts
    fs::create_directories(fs::path(directory).parent_path(), made);
    ::mkdir(directory.c_str(), 0700);
    struct stat status {};
    if (::stat(directory.c_str(), &status) != 0) {
        return fmt::format("{}: {}", directory, std::strerror(errno));
    }
    if (::faccessat(AT_FDCWD, directory.c_str(), W_OK | X_OK, AT_EACCESS) != 0) {
        return fmt::format("{} is not writable by uid {}", directory, ::geteuid());
    }
    if (own && status.st_uid != ::geteuid()) {
        return fmt::format("{} is not uid {}'s", directory, ::geteuid());
    }
    // What the tools and heapkit-index require of any cache (check_cache_directory): a
    // configured one too, or the indexer's heapkit-index would refuse it.
    if (auto checked = check_private_directory(directory); !checked) {
        return checked.error().message;
    }
    return std::nullopt;
}

// The temporary directory's fallback, one per user and kept from one start to the next
// (a service restarted in a loop would otherwise fill /tmp with one per start): made mode
// 0700 if missing, else used only when it is a directory, not a link, of this user's and
// closed to others. In a sticky /tmp another user can make the name first, but cannot then
// rename or remove ours. Why not, otherwise.
std::optional<std::string> not_ours(const std::string& directory) {
    if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
        return fmt::format("{}: cannot create: {}", directory, std::strerror(errno));
    }
    // Not O_DIRECTORY: a link would then read "Not a directory". O_NONBLOCK: a FIFO
    // planted under the name does not hold the open.
    UniqueFd fd(::open(directory.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat status {};
    if (!fd || ::fstat(fd.get(), &status) != 0) {
        return fmt::format("{}: {}", directory,
                           errno == ELOOP ? "a symbolic link" : std::strerror(errno));
    }
    if (!S_ISDIR(status.st_mode)) {
        return fmt::format("{}: not a directory", directory);
    }
    if (status.st_uid != ::geteuid()) {
        return fmt::format("{} belongs to uid {}, not to uid {}", directory, status.st_uid,
                           ::geteuid());
    }
    if ((status.st_mode & 077) != 0 && ::fchmod(fd.get(), 0700) != 0) {
        return fmt::format("{}: mode {:04o}, and cannot be made 0700: {}", directory,
                           status.st_mode & 07777, std::strerror(errno));
    }
    return std::nullopt;
}

std::string environment_value(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "";
}

} // namespace

std::string default_cache_directory() {
    for (auto [name, under] :
         {std::pair{"HEAPKIT_CACHE_DIR", ""}, std::pair{"XDG_CACHE_HOME", "/heapkit"},
          std::pair{"HOME", "/.cache/heapkit"}}) {
        if (std::string base = environment_value(name); !base.empty()) {
            return base + under;
        }
    }
    return {};
}

void remove_retired_caches(const std::string& directory) {
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
        std::string name = entry.path().filename().string();
        std::error_code ignored;
        // A link named so is not ours to follow: only real directories are emptied.
        if (!name.starts_with("frames-") ||
            entry.symlink_status(ignored).type() != fs::file_type::directory) {
            continue;
        }
        for (const fs::directory_entry& file : fs::directory_iterator(entry.path(), ignored)) {
            if (file.symlink_status(ignored).type() == fs::file_type::regular ||
                file.symlink_status(ignored).type() == fs::file_type::symlink) {
                fs::remove(file.path(), ignored); // removes a link, never what it leads to
            }
        }
        fs::remove(entry.path(), ignored); // only when emptied
    }
}

std::string writable_cache_directory(const std::string& configured, std::string& fallback_reason) {
    if (!configured.empty()) {
        auto problem = unusable(configured, false);
        if (!problem) {
            return configured;
        }
        fallback_reason = *problem;
    }
    for (auto [name, under] :
         {std::pair{"XDG_CACHE_HOME", "/heapkit"}, std::pair{"HOME", "/.cache/heapkit"}}) {
        std::string base = environment_value(name);
        if (!base.empty() && base + under != configured && !unusable(base + under, true)) {
            return base + under;
        }
    }
    std::string temporary = environment_value("TMPDIR");
    std::string own =
        fmt::format("{}/heapkit-cache-{}", temporary.empty() ? "/tmp" : temporary, ::geteuid());
    if (auto problem = not_ours(own)) {
        fallback_reason +=
            fmt::format("{}{}: no cache is kept", fallback_reason.empty() ? "" : "; ", *problem);
        return {};
    }
    return own;
}

} // namespace heapkit
