// SPDX-License-Identifier: MIT
#include "heapkit/runtime/export/stripped_modules.hpp"

#include "heapkit/load/load.hpp"
#include "heapkit/runtime/export/indexer.hpp"
#include "heapkit/runtime/notices.hpp"
#include "heapkit/symbolize/module_report.hpp"

#include <algorithm>
#include <map>
#include <mutex>

namespace heapkit::runtime {
namespace {

// The notes made so far, by module path. Never destroyed, as the server that reads it.
struct Noted {
    std::mutex mutex;
    std::map<std::string, std::string> by_path;
    std::vector<std::string> in_order;
};

Noted& noted() {
    static auto* kept = new Noted;
    return *kept;
}

} // namespace

void note_stripped_modules(Profile& profile, std::vector<ModuleReport>& modules) {
    std::vector<ModuleReport> unknown;
    {
        std::lock_guard lock(noted().mutex);
        for (const ModuleReport& module : modules) {
            if (!is_stripped(module)) {
                continue;
            }
            auto it = noted().by_path.find(module.path);
            if (it != noted().by_path.end()) {
                profile.notes.push_back(it->second);
            } else {
                unknown.push_back(module);
            }
        }
    }
    if (unknown.empty()) {
        return;
    }
    // dpkg's file lists are read outside the lock; a race only reads them twice.
    std::vector<std::string> notes = stripped_module_notes(unknown, indexer_cache_directory());
    std::lock_guard lock(noted().mutex);
    for (size_t i = 0; i < unknown.size() && i < notes.size(); ++i) {
        auto [it, added] = noted().by_path.emplace(unknown[i].path, notes[i]);
        if (added) {
            noted().in_order.push_back(notes[i]);
            notice_once("stripped " + unknown[i].path, notes[i]);
        }
        profile.notes.push_back(it->second);
    }
}

std::vector<std::string> stripped_module_notes_so_far() {
    std::lock_guard lock(noted().mutex);
    return noted().in_order;
}

} // namespace heapkit::runtime
