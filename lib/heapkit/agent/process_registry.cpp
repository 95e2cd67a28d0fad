// SPDX-License-Identifier: MIT
#include "heapkit/agent/process_registry.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <unistd.h>

namespace heapkit::agent {
namespace {

bool alive(int32_t pid) {
    return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH);
}

void copy(char* into, size_t size, std::string_view text) {
    size_t length = std::min(text.size(), size - 1);
    std::memcpy(into, text.data(), length);
    into[length] = '\0';
}

std::string command_name() {
    char name[17] = {};
    FILE* file = std::fopen("/proc/self/comm", "re");
    if (file != nullptr) {
        if (std::fgets(name, sizeof(name), file) == nullptr) {
            name[0] = '\0';
        }
        std::fclose(file);
    }
    std::string text = name;
    while (!text.empty() && text.back() == '\n') {
        text.pop_back();
    }
    return text;
}

} // namespace

void ProcessRegistry::add(const std::string& address, int port, bool first) {
    if (m_entries == nullptr) {
        return;
    }
    int32_t self = static_cast<int32_t>(getpid());
    for (size_t i = 0; i < registry_entries; ++i) {
        RegistryEntry& entry = m_entries[i];
        int32_t held = entry.pid.load();
        // A free entry, or one a process left when it ended (killed: no exit handler).
        if ((held == 0 || (held > 0 && !alive(held))) &&
            entry.pid.compare_exchange_strong(held, -self)) {
            entry.port = port;
            copy(entry.role, sizeof(entry.role), first ? "first" : "forked");
            copy(entry.name, sizeof(entry.name), command_name());
            copy(entry.address, sizeof(entry.address), address);
            entry.pid.store(self, std::memory_order_release);
            return;
        }
    }
}

void ProcessRegistry::remove() {
    if (m_entries == nullptr) {
        return;
    }
    int32_t self = static_cast<int32_t>(getpid());
    for (size_t i = 0; i < registry_entries; ++i) {
        int32_t held = self;
        m_entries[i].pid.compare_exchange_strong(held, 0);
    }
}

std::vector<runtime::ServingProcess> ProcessRegistry::list() const {
    std::vector<runtime::ServingProcess> processes;
    if (m_entries == nullptr) {
        return processes;
    }
    for (size_t i = 0; i < registry_entries; ++i) {
        const RegistryEntry& entry = m_entries[i];
        int32_t pid = entry.pid.load(std::memory_order_acquire);
        if (!alive(pid)) {
            continue;
        }
        std::string address(entry.address, strnlen(entry.address, sizeof(entry.address)));
        bool v6 = address.find(':') != std::string::npos;
        processes.push_back(
            {pid, std::string(entry.role, strnlen(entry.role, sizeof(entry.role))),
             std::string(entry.name, strnlen(entry.name, sizeof(entry.name))),
             fmt::format("http://{}{}{}:{}/", v6 ? "[" : "", address, v6 ? "]" : "", entry.port)});
    }
    std::stable_sort(processes.begin(), processes.end(), [](const auto& a, const auto& b) {
        return (a.role == "first") > (b.role == "first");
    });
    return processes;
}

} // namespace heapkit::agent
