// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"
#include "heapkit/util/gzip.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace heapkit {

// The whole text of one input, decompressed when it was gzipped.
struct InputText {
    std::string name;  // as the user named it; "<stdin>" for "-"
    std::string bytes; // decompressed contents
};

// Reads `path` ("-" means standard input) completely, inflating gzip input
// (detected by its magic bytes, not by the file name) to at most `max_inflated` bytes of
// text (binary data inside the gzip is refused at its first chunk). `expected` says what
// the file should have been, for the message about a directory.
Result<InputText> read_input(const std::string& path, uint64_t max_inflated = default_max_inflated,
                             std::string_view expected = "a heap profile");

// One input held for parsing, as read_input would read it, but without a copy where
// there can be none: a regular file that is not gzipped is mapped (read-only, private).
// Standard input, pipes and gzip input are read (and inflated) into memory.
class InputBuffer {
public:
    // `binary_ok`: gzipped binary data it accepts is taken too (GunzipLimits::binary_ok).
    static Result<InputBuffer> open(const std::string& path,
                                    uint64_t max_inflated = default_max_inflated,
                                    bool (*binary_ok)(std::string_view) = nullptr);
    // The same for a file in a cache: only a regular file, never through a symbolic link
    // (open_regular_file in private_files.hpp says why).
    static Result<InputBuffer> open_regular(const std::string& path);

    const std::string& name() const { return m_name; } // "<stdin>" for "-"
    // The file's modification time, in nanoseconds since the Unix epoch; 0 for standard
    // input (or a file whose time cannot be read).
    int64_t modified_nanos() const { return m_modified_nanos; }
    std::string_view text() const;
    // The text is held in memory (standard input, a pipe, gzip input), not mapped from a
    // file that could be opened again.
    bool held_in_memory() const { return !m_map; }

    // The reader is done with text() before `position`: a mapped file's pages there leave
    // this process's memory (they stay in the page cache, and would be read again if
    // touched). Text held in memory stays as it is. A position before the last one
    // starts another pass over the text (a scan, then the parse): its pages leave again
    // as it goes by.
    void release_before(const char* position);

private:
    static Result<InputBuffer> from(Result<UniqueFd> opened, const std::string& path,
                                    const GunzipLimits& limits);

    struct Unmap {
        size_t size;
        void operator()(char* start) const;
    };

    std::string m_name;
    std::string m_bytes;                                   // unless mapped
    std::unique_ptr<char, Unmap> m_map{nullptr, Unmap{0}}; // the whole file, when mapped
    size_t m_released = 0; // bytes at the front of the map given back
    int64_t m_modified_nanos = 0;
};

} // namespace heapkit
