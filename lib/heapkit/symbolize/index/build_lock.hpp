// SPDX-License-Identifier: MIT
// One process at a time builds a given key's address index: a CPython's takes a second of
// CPU and tens of MB, which two commands (or a command and the detached heapkit-index it
// started) meeting the same build must not both pay for.
#pragma once

#include "heapkit/util/unique_fd.hpp"

#include <optional>
#include <string>

namespace heapkit {

// An flock(2) on "<index directory>/.locks/<key>", released when destroyed (or when its
// holder dies: a killed builder leaves no stale lock). The lock file is opened
// O_NOFOLLOW and used only when fstat says it is a regular file of ours.
class BuildLock {
public:
    enum class Wait { no, yes };

    // The lock on `key`'s build: taken, or waited for with Wait::yes. nullopt when another
    // process holds it and `wait` is Wait::no. When no lock file can be had at all (a
    // directory that cannot be written), a lock that holds nothing: the build goes on,
    // and its save fails with a warning of its own.
    static std::optional<BuildLock> take(const std::string& index_directory, const std::string& key,
                                         Wait wait);

    // True when some process is building `key` now.
    static bool busy(const std::string& index_directory, const std::string& key);

    // A reader's hold on `key` while it opens and maps the key's index: shared, and not
    // waited for (a builder holds the lock through the whole build, and replaces the file
    // whole). A prune (cache_usage.hpp) removes only files whose lock it takes, so never
    // one a reader holds. Empty when there is no lock file, or a builder holds it.
    static UniqueFd hold_for_reading(const std::string& index_directory, const std::string& key);

private:
    explicit BuildLock(UniqueFd fd)
        : m_fd(std::move(fd)) {}
    UniqueFd m_fd;
};

} // namespace heapkit
