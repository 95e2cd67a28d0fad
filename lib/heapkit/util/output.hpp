// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/util/error.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <string>
#include <string_view>

namespace heapkit {

// Where a tool's result goes. Empty path or "-" means standard output.
struct OutputTarget {
    std::string path;
    bool binary = false; // refuse to write binary data to a terminal
    // fsync a file before renaming it into place. A cache can do without: after a crash
    // it may find a damaged file, which it ignores.
    bool sync = true;
    // A device or pipe at `path` (/dev/null, /dev/stdout, a FIFO) is written in place, as a
    // user who names one means. A cache, whose names nobody chose, sets this false: then
    // whatever is at `path` is replaced, never written through.
    bool in_place = true;
};

// Writes `bytes` completely or not at all: a file target is written to a temporary
// file in the same directory (made by mkstemp: O_EXCL, a name nobody can plant), flushed,
// and renamed over the target; on any failure the temporary is removed and the target is
// untouched. A symbolic link at the target is replaced, not followed, unless it leads to
// a device or pipe from a directory only root or this user can write (/dev/stdout).
Result<void> write_output(const OutputTarget& target, std::string_view bytes);

// The same, for a result written piece by piece: nothing appears at a file target until
// commit(), and a stream destroyed before it leaves the target untouched. (Standard
// output receives each piece as it is written.)
class OutputStream {
public:
    explicit OutputStream(OutputTarget target);
    ~OutputStream();
    OutputStream(const OutputStream&) = delete;
    OutputStream& operator=(const OutputStream&) = delete;

    // Opens the target (for a file, a temporary beside it); an error names it.
    Result<void> open();
    Result<void> write(std::string_view bytes);
    // Flushes, closes and renames the temporary into place.
    Result<void> commit();

private:
    const std::string& name() const;
    bool to_stdout() const;

    OutputTarget m_target;
    UniqueFd m_owned;   // the file or device opened, none for standard output
    int m_fd = -1;      // where pieces go
    std::string m_temp; // the temporary to rename or remove, when there is one
};

} // namespace heapkit
