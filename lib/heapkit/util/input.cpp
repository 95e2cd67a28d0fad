// SPDX-License-Identifier: MIT
#include "heapkit/util/input.hpp"

#include "heapkit/util/gzip.hpp"
#include "heapkit/util/private_files.hpp"
#include "heapkit/util/try.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

// The input named `path`: standard input for "-", else the opened file, refused when it
// is a directory.
Result<UniqueFd> open_file(const std::string& path, std::string_view expected = "a heap profile") {
    if (path == "-") {
        return UniqueFd();
    }
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return fail("{}: cannot open: {}", path, std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) {
        return fail("{}: is a directory, not {}", path, expected);
    }
    return fd;
}

// Reads all of `fd` (standard input when not open), inflated when gzipped.
Result<std::string> read_text(const UniqueFd& fd, const std::string& name,
                              const GunzipLimits& limits) {
    auto bytes = read_all(fd ? fd.get() : STDIN_FILENO, name);
    if (!bytes || !is_gzip(*bytes)) {
        return bytes;
    }
    return gunzip(*bytes, name, limits);
}

} // namespace

Result<InputText> read_input(const std::string& path, uint64_t max_inflated,
                             std::string_view expected) {
    InputText input;
    input.name = path == "-" ? "<stdin>" : path;
    HEAPKIT_TRY_ASSIGN(UniqueFd fd, open_file(path, expected));
    HEAPKIT_TRY_ASSIGN(input.bytes, read_text(fd, input.name, {max_inflated, true}));
    return input;
}

void InputBuffer::Unmap::operator()(char* start) const {
    ::munmap(start, size);
}

Result<InputBuffer> InputBuffer::open(const std::string& path, uint64_t max_inflated,
                                      bool (*binary_ok)(std::string_view)) {
    return from(open_file(path), path, {max_inflated, true, binary_ok});
}

Result<InputBuffer> InputBuffer::open_regular(const std::string& path) {
    return from(open_regular_file(path), path, {default_max_inflated, true});
}

Result<InputBuffer> InputBuffer::from(Result<UniqueFd> opened, const std::string& path,
                                      const GunzipLimits& limits) {
    InputBuffer input;
    input.m_name = path == "-" ? "<stdin>" : path;
    HEAPKIT_TRY_ASSIGN(UniqueFd fd, std::move(opened));
    struct stat st {};
    bool known = fd && ::fstat(fd.get(), &st) == 0;
    if (known) {
        input.m_modified_nanos = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    }
    if (known && S_ISREG(st.st_mode) && st.st_size > 0) {
        auto size = static_cast<size_t>(st.st_size);
        void* start = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
        if (start != MAP_FAILED) {
            input.m_map = {static_cast<char*>(start), Unmap{size}};
            if (!is_gzip({input.m_map.get(), size})) {
                ::madvise(start, size, MADV_SEQUENTIAL); // read ahead, front to back
                return input;
            }
            auto inflated = gunzip({input.m_map.get(), size}, input.m_name, limits);
            input.m_map.reset();
            HEAPKIT_TRY_ASSIGN(input.m_bytes, std::move(inflated));
            return input;
        }
    }
    // Pipes, terminals, files that cannot be mapped: read them.
    HEAPKIT_TRY_ASSIGN(input.m_bytes, read_text(fd, input.m_name, limits));
    return input;
}

std::string_view InputBuffer::text() const {
    if (m_map) {
        return {m_map.get(), m_map.get_deleter().size};
    }
    return m_bytes;
}

void InputBuffer::release_before(const char* position) {
    if (!m_map) {
        return;
    }
    static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const char* start = m_map.get();
    size_t size = m_map.get_deleter().size;
    if (position < start || position > start + size) {
        return;
    }
    size_t done = static_cast<size_t>(position - start) / page * page;
    if (done < m_released) {
        m_released = 0; // another pass: what it touched again goes again
    }
    if (done > m_released) {
        // MADV_DONTNEED on a private read-only file mapping only unmaps: the next touch
        // reads the file's page again, unchanged.
        ::madvise(const_cast<char*>(start) + m_released, done - m_released, MADV_DONTNEED);
        m_released = done;
    }
}

} // namespace heapkit
