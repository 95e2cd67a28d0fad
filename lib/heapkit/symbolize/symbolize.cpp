// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/symbolize.hpp"

#include "heapkit/symbolize/elf_module.hpp"

#include <fmt/format.h>
#include <map>

namespace heapkit {
namespace {

// Each file is opened once however many dumps and mappings name it.
class ModuleCache {
public:
    const ElfModule* get(const std::string& path, SymbolizeReport& report) {
        auto [it, inserted] = m_modules.try_emplace(path);
        if (inserted) {
            auto opened = ElfModule::open(path);
            if (opened) {
                it->second = std::move(*opened);
            } else {
                report.warnings.push_back(
                    fmt::format("{}; its frames stay unnamed", opened.error().message));
            }
        }
        return it->second.get();
    }

private:
    std::map<std::string, std::unique_ptr<ElfModule>> m_modules;
};

bool is_pseudo_path(const std::string& path) {
    return path.empty() || path.front() == '[';
}

} // namespace

SymbolizeReport symbolize(Profile& profile, const SymbolizeOptions& options) {
    SymbolizeReport report;
    ModuleCache cache;
    std::vector<const ElfModule*> files(profile.modules.size(), nullptr);
    for (size_t i = 0; i < profile.modules.size(); ++i) {
        Module& module = profile.modules[i];
        if (is_pseudo_path(module.path)) {
            continue;
        }
        files[i] = cache.get(module.path, report);
        if (files[i] != nullptr) {
            module.build_id = files[i]->build_id();
            module.is_allocator = !module.is_main && files[i]->is_jemalloc();
            module.has_functions = options.names;
        }
    }
    for (Location& location : profile.locations) {
        const ElfModule* file = location.module == no_module ? nullptr : files[location.module];
        if (file != nullptr && options.names) {
            const Module& module = profile.modules[location.module];
            auto vaddr = file->vaddr_of_file_offset(module.file_offset_of(location.address));
            location.frames = vaddr ? file->frames_at(*vaddr) : std::vector<Frame>{};
        } else if (!options.names) {
            location.frames.clear();
        } else if (!location.frames.empty() && location.module != no_module) {
            profile.modules[location.module].has_functions = true; // named by jeprof
        }
        // Stripped jemalloc internals are expected to be nameless; they are cut anyway.
        bool in_allocator =
            location.module != no_module && profile.modules[location.module].is_allocator;
        if (location.frames.empty() && !in_allocator) {
            ++report.unnamed_locations;
        }
    }
    return report;
}

} // namespace heapkit
