// SPDX-License-Identifier: MIT
#include "lineage.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

namespace heapkit::agent {
namespace {

// Programs that fork the program they are given and wait for it (or, for the shells, run
// a script's programs as children): the process the operator means is their child. Those
// that exec it instead (env, nice, nohup, setpriv, taskset, chrt, stdbuf, ...) need no
// entry: the program is the same process.
constexpr const char* wrappers[] = {
    "timeout", "sudo",    "su",        "runuser",   "sh",      "bash",  "dash",
    "time",    "tini",    "dumb-init", "catatonit", "xargs",   "flock", "setsid",
    "script",  "unshare", "sg",        "newgrp",    "chronic",
};

constexpr int most_ancestors = 8;

const char* base_name(const char* path) {
    const char* slash = std::strrchr(path, '/');
    return slash != nullptr ? slash + 1 : path;
}

// Reads up to `size` - 1 bytes of a small /proc file into `into`, NUL-terminated.
ssize_t read_small(const char* path, char* into, size_t size) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    ssize_t got = ::read(fd, into, size - 1);
    ::close(fd);
    into[got > 0 ? got : 0] = '\0';
    return got;
}

// True when HEAPKIT_PROGRAM names this process: its executable's file name, or its
// argv[0]'s (python3 runs /usr/bin/python3.11; a program may be started by a link).
bool is_program(const char* wanted) {
    char path[4096];
    ssize_t size = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (size > 0) {
        path[size] = '\0';
        if (std::strcmp(base_name(path), wanted) == 0) {
            return true;
        }
    }
    char command[4096];
    return read_small("/proc/self/cmdline", command, sizeof(command)) > 0 &&
           std::strcmp(base_name(command), wanted) == 0;
}

// True when process `pid`'s command name (/proc/PID/comm, which anyone may read) is a
// wrapper's. "self" for this process.
bool is_wrapper(const char* pid) {
    char path[64];
    char name[32];
    std::snprintf(path, sizeof(path), "/proc/%s/comm", pid);
    if (read_small(path, name, sizeof(name)) <= 0) {
        return false;
    }
    name[std::strcspn(name, "\n")] = '\0';
    for (const char* wrapper : wrappers) {
        if (std::strcmp(name, wrapper) == 0) {
            return true;
        }
    }
    return false;
}

enum class Carries { yes, no, unknown };

// Whether process `pid` has the agent mapped. Read a block at a time, without allocating.
Carries carries_agent(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%d/maps", static_cast<int>(pid));
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        // Gone (no), or another user's or not dumpable (unknown: it may carry it).
        return errno == ENOENT ? Carries::no : Carries::unknown;
    }
    constexpr const char* mark = "/libheapkit-agent";
    const size_t keep = std::strlen(mark);
    char block[8192 + 1];
    size_t carried = 0;
    Carries found = Carries::no;
    for (;;) {
        ssize_t got = ::read(fd, block + carried, sizeof(block) - 1 - carried);
        if (got < 0 && carried == 0) {
            found = Carries::unknown; // opened, and read refused (ptrace access checks)
        }
        if (got <= 0) {
            break;
        }
        size_t size = carried + static_cast<size_t>(got);
        block[size] = '\0';
        if (std::strstr(block, mark) != nullptr) {
            found = Carries::yes;
            break;
        }
        // The mark may straddle two blocks: keep its length's worth.
        carried = std::min(keep, size);
        std::memmove(block, block + size - carried, carried);
    }
    ::close(fd);
    return found;
}

// The parent of process `pid` (/proc/PID/stat's fourth field), or 0.
pid_t parent_of(pid_t pid) {
    char path[64];
    char stat[1024];
    std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
    if (read_small(path, stat, sizeof(stat)) <= 0) {
        return 0;
    }
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses; the last ')' ends it.
    const char* end = std::strrchr(stat, ')');
    int parent = 0;
    char state = 0;
    return end != nullptr && std::sscanf(end + 1, " %c %d", &state, &parent) == 2 ? parent : 0;
}

} // namespace

Meant meant_process() {
    const char* program = std::getenv("HEAPKIT_PROGRAM");
    if (program != nullptr && *program != '\0') {
        return is_program(program) ? Meant::yes : Meant::no;
    }
    if (is_wrapper("self")) {
        return Meant::no;
    }
    // Up the tree while the agent came from a wrapper: the first process that is not one
    // is served.
    pid_t ancestor = getppid();
    bool under_wrapper = false;
    for (int depth = 0; depth < most_ancestors && ancestor > 1; ++depth) {
        switch (carries_agent(ancestor)) {
        case Carries::no:
            return under_wrapper ? Meant::uncertain : Meant::yes;
        case Carries::unknown:
            return Meant::uncertain;
        case Carries::yes:
            break;
        }
        char pid[16];
        std::snprintf(pid, sizeof(pid), "%d", static_cast<int>(ancestor));
        if (!is_wrapper(pid)) {
            return Meant::no; // a program above this one is served
        }
        under_wrapper = true;
        ancestor = parent_of(ancestor);
    }
    // Reached the top (init, or a container's first process): the first process of the tree
    // is this one, or a wrapper's child.
    if (ancestor <= 1) {
        return under_wrapper ? Meant::uncertain : Meant::yes;
    }
    return Meant::no;
}

} // namespace heapkit::agent
