// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/index/build_lock.hpp"

#include "heapkit/util/private_files.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

namespace heapkit {
namespace {

// The lock file of `key`, made if missing; an empty fd when it cannot be used.
UniqueFd open_lock_file(const std::string& index_directory, const std::string& key) {
    std::string locks = index_directory + "/.locks";
    if (!make_private_directory(index_directory) || !make_private_directory(locks)) {
        return {};
    }
    std::string path = locks + "/" + key;
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
        return {};
    }
    return fd;
}

// The lock file of `key` when there is one (a regular file); never made.
UniqueFd open_existing_lock(const std::string& index_directory, const std::string& key) {
    std::string path = index_directory + "/.locks/" + key;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return {};
    }
    return fd;
}

int flock_retrying(int fd, int operation) {
    int result;
    do {
        result = ::flock(fd, operation);
    } while (result != 0 && errno == EINTR);
    return result;
}

} // namespace

std::optional<BuildLock> BuildLock::take(const std::string& index_directory, const std::string& key,
                                         Wait wait) {
    UniqueFd fd = open_lock_file(index_directory, key);
    if (fd && flock_retrying(fd.get(), LOCK_EX | (wait == Wait::yes ? 0 : LOCK_NB)) != 0) {
        if (errno == EWOULDBLOCK) {
            return std::nullopt;
        }
        fd.reset(); // flock unsupported here: build unlocked
    }
    return BuildLock(std::move(fd));
}

bool BuildLock::busy(const std::string& index_directory, const std::string& key) {
    UniqueFd fd = open_existing_lock(index_directory, key);
    // Shared probe: fails only while a builder holds it exclusively. Released on close.
    return fd && flock_retrying(fd.get(), LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

UniqueFd BuildLock::hold_for_reading(const std::string& index_directory, const std::string& key) {
    UniqueFd fd = open_existing_lock(index_directory, key);
    if (fd && flock_retrying(fd.get(), LOCK_SH | LOCK_NB) != 0) {
        fd.reset();
    }
    return fd;
}

} // namespace heapkit
