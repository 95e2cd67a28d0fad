// SPDX-License-Identifier: MIT
#pragma once

#include <csignal>
#include <spawn.h>

namespace heapkit {

// posix_spawn's attributes and file actions, destroyed however the spawn ends.
class SpawnSetup {
public:
    SpawnSetup() {
        posix_spawnattr_init(&m_attributes);
        posix_spawn_file_actions_init(&m_actions);
    }
    ~SpawnSetup() {
        posix_spawn_file_actions_destroy(&m_actions);
        posix_spawnattr_destroy(&m_attributes);
    }
    SpawnSetup(const SpawnSetup&) = delete;
    SpawnSetup& operator=(const SpawnSetup&) = delete;
    posix_spawnattr_t* attributes() { return &m_attributes; }
    // The child starts with no signal blocked and every disposition at its default,
    // whatever this process blocks or ignores (a host may block SIGTERM in every thread,
    // for sigwait); `more_flags` (POSIX_SPAWN_SETSID, ...) are set too.
    void default_signals(short more_flags = 0) {
        sigset_t none;
        sigset_t all;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_setsigmask(&m_attributes, &none);
        posix_spawnattr_setsigdefault(&m_attributes, &all);
        posix_spawnattr_setflags(
            &m_attributes,
            static_cast<short>(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | more_flags));
    }
    posix_spawn_file_actions_t* actions() { return &m_actions; }

private:
    posix_spawnattr_t m_attributes;
    posix_spawn_file_actions_t m_actions;
};

} // namespace heapkit
