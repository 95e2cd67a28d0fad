// SPDX-License-Identifier: MIT
#include "heapkit/runtime/guest/descriptor.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace heapkit::runtime {
namespace {

bool identify(int fd, Identity& identity) {
    struct stat status {};
    if (::fstat(fd, &status) != 0) {
        return false;
    }
    identity = {status.st_dev, status.st_ino, static_cast<mode_t>(status.st_mode & S_IFMT)};
    return true;
}

// `fd` moved to the lowest free number at or above the floor; `fd` itself where there is
// none (EMFILE, EINVAL for a floor over the limit): still close-on-exec, only lower.
int move_high(int fd, const Identity& identity) {
    int floor = descriptor_floor();
    if (fd >= floor) {
        return fd;
    }
    int high = ::fcntl(fd, F_DUPFD_CLOEXEC, floor);
    if (high < 0) {
        return fd;
    }
    // The low number is closed only if it is still the same object: between the two
    // calls a host thread may have closed it and opened something of its own there.
    Identity low;
    if (identify(fd, low) && low == identity) {
        ::close(fd);
    }
    return high;
}

} // namespace

int descriptor_floor() {
    static const int floor = [] {
        rlimit limit{};
        if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
            return 1000;
        }
        return static_cast<int>(std::clamp<rlim_t>(limit.rlim_cur / 2, 3, 1000));
    }();
    return floor;
}

DescriptorTable::DescriptorTable(size_t capacity)
    : m_slots(std::make_unique<Slot[]>(capacity))
    , m_capacity(capacity) {}

int DescriptorTable::add(int number, const Identity& identity) {
    for (size_t i = 0; i < m_capacity; ++i) {
        Slot& slot = m_slots[i];
        if (slot.number.load(std::memory_order_relaxed) == -1) {
            slot.identity = identity; // published by the store below
            slot.number.store(number, std::memory_order_release);
            return static_cast<int>(i);
        }
    }
    return -1;
}

void DescriptorTable::remove(int slot) {
    if (slot >= 0) {
        m_slots[static_cast<size_t>(slot)].number.store(-1, std::memory_order_release);
    }
}

void DescriptorTable::close_copies_after_fork() {
    for (size_t i = 0; i < m_capacity; ++i) {
        int number = m_slots[i].number.load(std::memory_order_acquire);
        Identity now;
        if (number >= 0 && identify(number, now) && now == m_slots[i].identity) {
            ::close(number);
        }
        m_slots[i].number.store(-1, std::memory_order_relaxed);
    }
}

Descriptor Descriptor::adopt(int fd, DescriptorTable* table) {
    Descriptor owned;
    if (fd < 0) {
        return owned;
    }
    if (!identify(fd, owned.m_identity)) {
        int saved = errno;
        ::close(fd);
        errno = saved;
        return owned;
    }
    owned.m_number = move_high(fd, owned.m_identity);
    owned.m_table = table;
    if (table != nullptr) {
        owned.m_slot = table->add(owned.m_number, owned.m_identity);
    }
    return owned;
}

Descriptor::~Descriptor() {
    reset();
}

Descriptor::Descriptor(Descriptor&& other) noexcept
    : m_number(std::exchange(other.m_number, -1))
    , m_slot(std::exchange(other.m_slot, -1))
    , m_identity(other.m_identity)
    , m_table(std::exchange(other.m_table, nullptr)) {}

Descriptor& Descriptor::operator=(Descriptor&& other) noexcept {
    if (this != &other) {
        reset();
        m_number = std::exchange(other.m_number, -1);
        m_slot = std::exchange(other.m_slot, -1);
        m_identity = other.m_identity;
        m_table = std::exchange(other.m_table, nullptr);
    }
    return *this;
}

bool Descriptor::intact() const {
    Identity now;
    return m_number >= 0 && identify(m_number, now) && now == m_identity;
}

void Descriptor::forget() {
    if (m_table != nullptr) {
        m_table->remove(m_slot);
    }
    m_number = -1;
    m_slot = -1;
    m_table = nullptr;
}

void Descriptor::reset() {
    int number = m_number;
    bool ours = intact();
    forget();
    if (ours) {
        ::close(number);
    }
}

} // namespace heapkit::runtime
