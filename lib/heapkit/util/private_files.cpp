// SPDX-License-Identifier: MIT
#include "heapkit/util/private_files.hpp"

#include "heapkit/util/try.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace heapkit {

Result<void> check_private_directory(const std::string& directory) {
    struct stat st {};
    if (::stat(directory.c_str(), &st) != 0) {
        return fail_system(errno, "{}: {}", directory, std::strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        return fail("{}: not a directory", directory);
    }
    if (st.st_uid != ::geteuid()) {
        return fail("{}: belongs to uid {}, not to this user (uid {})", directory, st.st_uid,
                    ::geteuid());
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0) {
        return fail("{}: others may write to it (mode {:04o}, no sticky bit)", directory,
                    st.st_mode & 07777);
    }
    return {};
}

Result<void> make_private_directory(const std::string& directory) {
    std::filesystem::path path(directory);
    std::error_code ignored; // a parent that cannot be made fails the mkdir below
    if (path.has_parent_path()) {
        std::filesystem::create_directories(path.parent_path(), ignored);
    }
    if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
        return fail_system(errno, "{}: cannot create: {}", directory, std::strerror(errno));
    }
    return check_private_directory(directory);
}

Result<void> check_sole_directory(const std::string& directory) {
    HEAPKIT_TRY(check_private_directory(directory));
    struct stat st {};
    if (::stat(directory.c_str(), &st) != 0) {
        return fail_system(errno, "{}: {}", directory, std::strerror(errno));
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return fail("{}: others may write to it (mode {:04o}); it must be this user's alone "
                    "(a directory of its own, mode 0700)",
                    directory, st.st_mode & 07777);
    }
    return {};
}

Result<void> make_sole_directory(const std::string& directory) {
    HEAPKIT_TRY(make_private_directory(directory));
    return check_sole_directory(directory);
}

Result<UniqueFd> open_regular_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        return fail_system(errno, "{}: cannot open: {}", path,
                           errno == ELOOP ? "a symbolic link" : std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        return fail_system(errno, "{}: cannot open: {}", path, std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        return fail("{}: not a regular file", path);
    }
    return fd;
}

Result<std::string> read_regular_file(const std::string& path, size_t max_bytes) {
    auto fd = open_regular_file(path);
    if (!fd) {
        return tl::unexpected(fd.error());
    }
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0 || static_cast<uint64_t>(st.st_size) > max_bytes) {
        return fail("{}: larger than {} bytes", path, max_bytes);
    }
    std::string bytes(static_cast<size_t>(st.st_size), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t got = ::read(fd->get(), bytes.data() + done, bytes.size() - done);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return fail_system(errno, "{}: cannot read: {}", path, std::strerror(errno));
        }
        if (got == 0) {
            bytes.resize(done); // shrunk meanwhile: what there was
            break;
        }
        done += static_cast<size_t>(got);
    }
    return bytes;
}

} // namespace heapkit
