// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/module_facts.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

namespace heapkit {
namespace {

void sort_unique(std::vector<uint64_t>& values) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
}

} // namespace

std::vector<Module> mapped_extents(const std::vector<Module>& modules) {
    std::map<std::string_view, std::vector<size_t>> by_path;
    for (size_t i = 0; i < modules.size(); ++i) {
        by_path[modules[i].path].push_back(i);
    }
    std::vector<Module> extents;
    extents.reserve(modules.size());
    for (const Module& module : modules) {
        Module extent = module;
        for (bool grown = true; grown;) {
            grown = false;
            for (size_t other : by_path[module.path]) {
                const Module& piece = modules[other];
                if (piece.limit == extent.start &&
                    piece.file_offset + (piece.limit - piece.start) == extent.file_offset) {
                    extent.start = piece.start;
                    extent.file_offset = piece.file_offset;
                    grown = true;
                } else if (piece.start == extent.limit &&
                           extent.file_offset + (extent.limit - extent.start) ==
                               piece.file_offset) {
                    extent.limit = piece.limit;
                    grown = true;
                }
            }
        }
        extents.push_back(std::move(extent));
    }
    return extents;
}

// Per file the dump maps, its mappings in every dump together (one entry for those a
// file named, one for those it could not): what was found, and what stayed unnamed.
void report_modules(const Profile& profile, const std::vector<const ElfModule*>& files,
                    const std::vector<ModuleNotes>& notes, SymbolizeReport& report) {
    std::map<std::pair<std::string_view, bool>, size_t> entry_of_key;
    std::vector<size_t> entry_of(profile.modules.size());
    std::vector<std::vector<uint64_t>> offsets; // every address, per entry
    for (size_t i = 0; i < profile.modules.size(); ++i) {
        auto [it, inserted] = entry_of_key.try_emplace(
            std::pair{std::string_view(profile.modules[i].path), files[i] != nullptr},
            report.modules.size());
        if (inserted) {
            ModuleReport entry;
            entry.path = profile.modules[i].path;
            entry.build_id = files[i] != nullptr ? files[i]->build_id() : std::string();
            entry.problem = notes[i].problem;
            entry.problem_text = notes[i].problem_text;
            report.modules.push_back(std::move(entry));
            offsets.emplace_back();
        }
        entry_of[i] = it->second;
    }
    for (const Location& location : profile.locations) {
        const Module* module =
            location.module == no_module ? nullptr : &profile.modules[location.module];
        bool unnamed = (location.frames.empty() || location.anonymous) &&
                       (module == nullptr || !module->is_allocator);
        if (module == nullptr) {
            if (unnamed) {
                report.unmapped.push_back(location.address);
            }
            continue;
        }
        uint64_t offset = module->file_offset_of(location.address);
        size_t entry = entry_of[location.module];
        offsets[entry].push_back(offset);
        if (unnamed) {
            report.modules[entry].unnamed.push_back(offset);
        }
        const ElfModule* file = files[location.module];
        if (unnamed && location.anonymous && file != nullptr) {
            auto vaddr = file->vaddr_of_file_offset(offset);
            auto start = vaddr ? file->function_start(*vaddr) : std::nullopt;
            if (start) {
                report.modules[entry].unnamed_functions.push_back(*start);
            }
        }
    }
    sort_unique(report.unmapped);
    for (size_t entry = 0; entry < report.modules.size(); ++entry) {
        sort_unique(offsets[entry]); // two dumps' mappings of one file share addresses
        sort_unique(report.modules[entry].unnamed);
        sort_unique(report.modules[entry].unnamed_functions);
        report.modules[entry].addresses = offsets[entry].size();
        report.modules[entry].offsets = std::move(offsets[entry]);
    }
    // What a file has, only where something stayed unnamed: it may mean finding its
    // debug file.
    for (size_t i = 0; i < files.size(); ++i) {
        ModuleReport& entry = report.modules[entry_of[i]];
        if (files[i] != nullptr && !entry.unnamed.empty()) {
            entry.has_symtab = files[i]->has_symtab();
            entry.has_dynsym = files[i]->has_dynsym();
            entry.has_debug_info = files[i]->has_dwarf();
        }
    }
}

} // namespace heapkit
