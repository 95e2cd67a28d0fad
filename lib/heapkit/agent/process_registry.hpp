// SPDX-License-Identifier: MIT
// Which processes of a tree serve, kept in one page of memory shared by the tree: the
// loader maps it (MAP_SHARED, anonymous) in the first process before main, so every
// fork()ed child has it too; each serving process writes its entry, and any of them can
// list all (the first process's index page and /metrics). A process that exited is
// skipped, and its entry taken by the next one that serves.
#pragma once

#include "heapkit/runtime/guest/serving_processes.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace heapkit::agent {

struct RegistryEntry {
    std::atomic<int32_t> pid; // 0: free; negative: being written by -pid
    int32_t port;
    char role[8];     // "first" or "forked"
    char name[16];    // /proc/self/comm
    char address[48]; // numeric, as HEAPKIT_LISTEN has it
};

inline constexpr size_t registry_bytes = 4096;
inline constexpr size_t registry_entries = registry_bytes / sizeof(RegistryEntry);

class ProcessRegistry {
public:
    // Over the loader's shared page; null: a registry of this process alone.
    explicit ProcessRegistry(void* page)
        : m_entries(static_cast<RegistryEntry*>(page)) {}

    // Records this process as serving on address:port.
    void add(const std::string& address, int port, bool first);
    // Removes this process's entry (at exit).
    void remove();
    // Every live serving process, the first first.
    std::vector<runtime::ServingProcess> list() const;

private:
    RegistryEntry* m_entries;
};

} // namespace heapkit::agent
