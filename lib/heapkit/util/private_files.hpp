// SPDX-License-Identifier: MIT
// Files in a directory that stays one user's (a cache): the rules ssh and ccache keep for
// theirs. Someone else able to write there could plant a symbolic link, a FIFO or a
// device under a name we are about to use, and have us follow it.
#pragma once

#include "heapkit/util/error.hpp"
#include "heapkit/util/unique_fd.hpp"

#include <cstddef>
#include <string>

namespace heapkit {

// An error saying why `directory` is not this user's alone: it belongs to another user,
// or its group or others may write to it without the sticky bit (which would let them
// rename our files away). Symbolic links to the directory are followed: where it lives
// is the user's choice. An error also when it cannot be examined.
Result<void> check_private_directory(const std::string& directory);

// `directory`, created (mode 0700, parents as mkdir -p makes them) when missing, then
// checked as check_private_directory does.
Result<void> make_private_directory(const std::string& directory);

// Stricter, for a directory of files no one else may add to (heap captures, which others
// could crowd out or plant beside ours): as check_private_directory, and no one but its
// owner may write to it, sticky bit or not (/tmp, mode 1777, is refused even to root).
Result<void> check_sole_directory(const std::string& directory);
// make_private_directory, then check_sole_directory.
Result<void> make_sole_directory(const std::string& directory);

// `path` opened for reading only if it is a regular file: a symbolic link is not followed
// (O_NOFOLLOW), a FIFO or device is refused after an open that cannot block (O_NONBLOCK).
Result<UniqueFd> open_regular_file(const std::string& path);

// All of the regular file `path` (opened as open_regular_file does), refused when it is
// longer than `max_bytes`.
Result<std::string> read_regular_file(const std::string& path, size_t max_bytes);

} // namespace heapkit
