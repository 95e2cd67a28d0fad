// SPDX-License-Identifier: MIT
#include "heapkit/util/input.hpp"

#include "heapkit/util/gzip.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>

namespace heapkit {
namespace {

Result<std::string> read_all(int fd, const std::string& name) {
    std::string bytes;
    constexpr size_t chunk = 1 << 20;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        // Room for the file and the last (empty) read's chunk: no reallocation, no copy.
        bytes.reserve(static_cast<size_t>(st.st_size) + chunk);
    }
    for (;;) {
        size_t old_size = bytes.size();
        bytes.resize(old_size + chunk);
        ssize_t got = ::read(fd, bytes.data() + old_size, chunk);
        if (got < 0 && errno == EINTR) {
            bytes.resize(old_size);
            continue;
        }
        if (got < 0) {
            return fail("{}: cannot read: {}", name, std::strerror(errno));
        }
        bytes.resize(old_size + static_cast<size_t>(got));
        if (got == 0) {
            return bytes;
        }
    }
}

} // namespace

Result<InputText> read_input(const std::string& path) {
    InputText input;
    UniqueFd owned;
    int fd = STDIN_FILENO;
    if (path == "-") {
        input.name = "<stdin>";
    } else {
        input.name = path;
        owned.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!owned) {
            return fail("{}: cannot open: {}", path, std::strerror(errno));
        }
        fd = owned.get();
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
            return fail("{}: is a directory, not a heap profile", path);
        }
    }
    auto bytes = read_all(fd, input.name);
    if (!bytes) {
        return tl::unexpected(bytes.error());
    }
    if (is_gzip(*bytes)) {
        auto inflated = gunzip(*bytes, input.name);
        if (!inflated) {
            return tl::unexpected(inflated.error());
        }
        input.bytes = std::move(*inflated);
    } else {
        input.bytes = std::move(*bytes);
    }
    return input;
}

} // namespace heapkit
