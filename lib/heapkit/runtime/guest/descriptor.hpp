// SPDX-License-Identifier: MIT
// The descriptors a guest holds while the host runs (the server's socket, epoll, eventfd),
// kept where a host program does not reach them and never used once the host has: a
// program may close every descriptor it did not open (daemons do, at start or after fork)
// and open files that take the same numbers. Which type: a number kept past the call that
// opened it is a Descriptor; one opened, used and closed within one call on a thread of
// ours (a capture written, a dump read back, a pipe to the indexer) is a UniqueFd
// (util/unique_fd.hpp), as the window in which a host could take it is that call's.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <sys/types.h>

namespace heapkit::runtime {

// The lowest number the server's descriptors take: half the soft RLIMIT_NOFILE, at most
// 1000. A host's new descriptors take the lowest free numbers, so its reopened files stay
// below; the kernel's table grows to the highest number in use (8 bytes a slot), so the
// floor is not put near a limit of a million; and half the numbers stay the host's.
int descriptor_floor();

// What a descriptor was when the server made it: st_dev and st_ino name the open object,
// and the file type tells a socket from a file. (An eventfd and an epoll share one
// anonymous inode with every other: for those the floor is what keeps a host away.)
struct Identity {
    dev_t device = 0;
    ino_t inode = 0;
    mode_t type = 0;
    bool operator==(const Identity&) const = default;
};

// Every number a server holds, readable in a fork()ed child whose other threads are gone
// (their containers may be half-changed there): slots of atomics, fixed at the start.
class DescriptorTable {
public:
    explicit DescriptorTable(size_t capacity);
    // A free slot for `number`, or -1 when full.
    int add(int number, const Identity& identity);
    void remove(int slot);
    // In a fork()ed child: closes the child's copy of each number still the server's,
    // leaves the others (the host's now) alone.
    void close_copies_after_fork();

private:
    struct Slot {
        std::atomic<int> number{-1};
        Identity identity;
    };
    std::unique_ptr<Slot[]> m_slots;
    size_t m_capacity;
};

// One descriptor the server owns, moved above descriptor_floor(), close-on-exec, with
// the identity it had. Closed by its destructor only while still intact: once the host
// has closed the number (and perhaps reused it), the number is the host's and is let go.
class Descriptor {
public:
    Descriptor() = default;
    // Takes `fd` (just made, close-on-exec): moves it above the floor (fcntl F_DUPFD_CLOEXEC,
    // the low number closed; where nothing above is free, it stays where it is) and
    // remembers what it is. -1 (and errno) when fstat fails; `fd` is then closed.
    static Descriptor adopt(int fd, DescriptorTable* table);
    ~Descriptor();
    Descriptor(Descriptor&& other) noexcept;
    Descriptor& operator=(Descriptor&& other) noexcept;
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;

    explicit operator bool() const { return m_number >= 0; }
    // The number, for a system call made right after intact() said yes.
    int number() const { return m_number; }
    // Whether the number still names the object the server made (one fstat).
    bool intact() const;
    // Never touches the number again, not even to close it (it is the host's now).
    void forget();
    // Closes it if still intact (else forgets it).
    void reset();

private:
    int m_number = -1;
    int m_slot = -1;
    Identity m_identity;
    DescriptorTable* m_table = nullptr;
};

} // namespace heapkit::runtime
