// SPDX-License-Identifier: MIT
#include "heapkit/util/output.hpp"

#include "heapkit/util/sink.hpp"
#include "heapkit/util/try.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace heapkit {
namespace {

Result<void> write_fully(int fd, std::string_view bytes, const std::string& name) {
    while (!bytes.empty()) {
        ssize_t put = ::write(fd, bytes.data(), bytes.size());
        if (put < 0 && errno == EINTR) {
            continue;
        }
        if (put < 0) {
            return fail("{}: cannot write: {}", name, std::strerror(errno));
        }
        bytes.remove_prefix(static_cast<size_t>(put));
    }
    return {};
}

// True when only root or this user can have put a symbolic link in `link`'s directory.
bool planted_by_no_one_else(const std::string& link) {
    size_t slash = link.rfind('/');
    std::string directory = slash == std::string::npos ? "." : link.substr(0, slash + 1);
    struct stat st {};
    return ::stat(directory.c_str(), &st) == 0 && (st.st_uid == 0 || st.st_uid == ::geteuid()) &&
           (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// Whether the target is a device or pipe to write into, not a file to replace. Devices
// and pipes cannot be renamed over; but a link someone else planted (in a shared cache, in
// /tmp) must not lead our writes into one (a FIFO hangs us, a disk is overwritten).
bool writes_in_place(const OutputTarget& target) {
    struct stat at {};
    struct stat behind {};
    if (!target.in_place || ::lstat(target.path.c_str(), &at) != 0 ||
        ::stat(target.path.c_str(), &behind) != 0 || S_ISREG(behind.st_mode) ||
        S_ISDIR(behind.st_mode)) {
        return false;
    }
    return !S_ISLNK(at.st_mode) || planted_by_no_one_else(target.path);
}

} // namespace

OutputStream::OutputStream(OutputTarget target)
    : m_target(std::move(target)) {}

OutputStream::~OutputStream() {
    if (!m_temp.empty()) {
        ::unlink(m_temp.c_str());
    }
}

const std::string& OutputStream::name() const {
    static const std::string standard_output = "<stdout>";
    return to_stdout() ? standard_output : m_target.path;
}

bool OutputStream::to_stdout() const {
    return m_target.path.empty() || m_target.path == "-";
}

Result<void> OutputStream::open() {
    const std::string& path = m_target.path;
    if (to_stdout()) {
        if (m_target.binary && ::isatty(STDOUT_FILENO)) {
            return fail("refusing to write a binary profile to a terminal; use -o FILE or "
                        "redirect standard output (e.g. > heap.pb.gz)");
        }
        m_fd = STDOUT_FILENO;
        return {};
    }
    if (writes_in_place(m_target)) {
        m_owned = UniqueFd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
        if (!m_owned) {
            return fail("{}: cannot open output: {}", path, std::strerror(errno));
        }
        m_fd = m_owned.get();
        return {};
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        return fail("{}: is a directory", path);
    }
    // The name is complete before the file exists: once mkstemp made it, nothing that can
    // fail (or throw) stands between it and m_temp, whose owner removes it.
    m_temp = path + ".tmp.XXXXXX";
    m_owned = UniqueFd(::mkstemp(m_temp.data()));
    if (!m_owned) {
        m_temp.clear();
        return fail("{}: cannot create output: {}", path, std::strerror(errno));
    }
    m_fd = m_owned.get();
    // mkstemp makes 0600 files; give the result the usual umask-governed mode.
    mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(m_fd, 0666 & ~mask);
    return {};
}

Result<void> OutputStream::write(std::string_view bytes) {
    return write_fully(m_fd, bytes, name());
}

Result<void> OutputStream::commit() {
    if (!m_owned) {
        return {}; // standard output: every byte already went
    }
    if (!m_temp.empty() && m_target.sync && ::fsync(m_fd) != 0 && errno != EINVAL) {
        return fail("{}: cannot write: {}", name(), std::strerror(errno));
    }
    // POSIX leaves the fd closed even when close fails, so release it first.
    if (::close(m_owned.release()) != 0) {
        return fail("{}: cannot write: {}", name(), std::strerror(errno));
    }
    if (!m_temp.empty()) {
        if (::rename(m_temp.c_str(), m_target.path.c_str()) != 0) {
            return fail("{}: cannot write: {}", name(), std::strerror(errno));
        }
        m_temp.clear(); // in place: nothing to remove
    }
    return {};
}

Result<void> write_output(const OutputTarget& target, std::string_view bytes) {
    OutputStream out(target);
    if (auto ok = out.open(); !ok) {
        return ok;
    }
    if (auto ok = out.write(bytes); !ok) {
        return ok;
    }
    return out.commit();
}

Result<void> write_output(const std::string& path, bool binary,
                          const std::function<Result<void>(const Sink&)>& produce) {
    return catching([&]() -> Result<void> {
        OutputStream out({path, binary});
        HEAPKIT_TRY(out.open());
        HEAPKIT_TRY(produce([&](std::string_view piece) { return out.write(piece); }));
        return out.commit();
    });
}

} // namespace heapkit
