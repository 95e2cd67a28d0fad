// SPDX-License-Identifier: MIT
#include "heapkit/util/output.hpp"

#include "heapkit/util/unique_fd.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

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

// Removes the temporary file unless it was renamed into place.
class TempFile {
public:
    explicit TempFile(std::string path)
        : m_path(std::move(path)) {}
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (!m_kept) {
            ::unlink(m_path.c_str());
        }
    }
    const std::string& path() const { return m_path; }
    void keep() { m_kept = true; }

private:
    std::string m_path;
    bool m_kept = false;
};

Result<void> write_file_atomically(const std::string& target, std::string_view bytes) {
    std::vector<char> pattern(target.begin(), target.end());
    for (char c : std::string_view(".tmp.XXXXXX")) {
        pattern.push_back(c);
    }
    pattern.push_back('\0');
    UniqueFd fd(::mkstemp(pattern.data()));
    if (!fd) {
        return fail("{}: cannot create output: {}", target, std::strerror(errno));
    }
    TempFile temp(pattern.data());
    // mkstemp makes 0600 files; give the result the usual umask-governed mode.
    mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd.get(), 0666 & ~mask);
    if (auto ok = write_fully(fd.get(), bytes, target); !ok) {
        return ok;
    }
    if (::fsync(fd.get()) != 0 && errno != EINVAL) {
        return fail("{}: cannot write: {}", target, std::strerror(errno));
    }
    // POSIX leaves the fd closed even when close fails, so release it first.
    if (::close(fd.release()) != 0) {
        return fail("{}: cannot write: {}", target, std::strerror(errno));
    }
    if (::rename(temp.path().c_str(), target.c_str()) != 0) {
        return fail("{}: cannot write: {}", target, std::strerror(errno));
    }
    temp.keep();
    return {};
}

// Devices and pipes (/dev/null, /dev/full, a FIFO) cannot be renamed over: write them in place.
Result<void> write_special_file(const std::string& target, std::string_view bytes) {
    UniqueFd fd(::open(target.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd) {
        return fail("{}: cannot open output: {}", target, std::strerror(errno));
    }
    if (auto ok = write_fully(fd.get(), bytes, target); !ok) {
        return ok;
    }
    if (::close(fd.release()) != 0) {
        return fail("{}: cannot write: {}", target, std::strerror(errno));
    }
    return {};
}

} // namespace

Result<void> write_output(const OutputTarget& target, std::string_view bytes) {
    if (!target.path.empty() && target.path != "-") {
        struct stat st {};
        if (::stat(target.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
            if (S_ISDIR(st.st_mode)) {
                return fail("{}: is a directory", target.path);
            }
            return write_special_file(target.path, bytes);
        }
        return write_file_atomically(target.path, bytes);
    }
    if (target.binary && ::isatty(STDOUT_FILENO)) {
        return fail("refusing to write a binary profile to a terminal; use -o FILE or redirect "
                    "standard output (e.g. > heap.pb.gz)");
    }
    return write_fully(STDOUT_FILENO, bytes, "<stdout>");
}

} // namespace heapkit
