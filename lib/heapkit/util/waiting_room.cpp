// SPDX-License-Identifier: MIT
#include "heapkit/util/waiting_room.hpp"

namespace heapkit {

WaitingRoom::WaitingRoom(unsigned max_waiting, StartThread start)
    : m_start(std::move(start))
    , m_max(max_waiting) {}

WaitingRoom::~WaitingRoom() {
    stop();
}

bool WaitingRoom::enter(uint64_t id, std::function<void()> page) {
    std::unique_lock lock(m_mutex);
    join_finished(lock);
    if (m_stopping || m_running >= m_max) {
        return false;
    }
    ++m_running;
    Guest& guest = m_guests.emplace_back();
    guest.id = id;
    guest.thread = m_start([this, &guest, page = std::move(page)] {
        page();
        std::lock_guard held(m_mutex);
        --m_running;
        guest.done = true;
        m_woken.notify_all();
    });
    return true;
}

void WaitingRoom::wait(uint64_t id, std::chrono::milliseconds window) {
    std::unique_lock lock(m_mutex);
    m_woken.wait_for(lock, window, [&] { return cut_short(id); });
}

bool WaitingRoom::stopping(uint64_t id) {
    std::lock_guard lock(m_mutex);
    return cut_short(id);
}

void WaitingRoom::abandon(uint64_t id) {
    {
        std::lock_guard lock(m_mutex);
        for (Guest& guest : m_guests) {
            guest.abandoned = guest.abandoned || guest.id == id;
        }
    }
    m_woken.notify_all();
}

bool WaitingRoom::cut_short(uint64_t id) const {
    if (m_stopping) {
        return true;
    }
    for (const Guest& guest : m_guests) {
        if (guest.id == id) {
            return guest.abandoned;
        }
    }
    return false;
}

void WaitingRoom::stop() {
    std::list<Guest> guests;
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        guests.swap(m_guests);
    }
    m_woken.notify_all();
    for (Guest& guest : guests) {
        guest.thread.join();
    }
}

// Threads whose page is done are joined as new ones come (join is quick: they are past
// their last line).
void WaitingRoom::join_finished(std::unique_lock<std::mutex>& lock) {
    std::list<Guest> finished;
    for (auto it = m_guests.begin(); it != m_guests.end();) {
        auto next = std::next(it);
        if (it->done) {
            finished.splice(finished.end(), m_guests, it);
        }
        it = next;
    }
    lock.unlock();
    for (Guest& guest : finished) {
        guest.thread.join();
    }
    lock.lock();
}

} // namespace heapkit
