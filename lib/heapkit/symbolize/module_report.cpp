// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/module_report.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <iterator>
#include <string_view>

namespace heapkit {
namespace {

std::string_view base_name(std::string_view path) {
    size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string build_id_suffix(const ModuleReport& module) {
    return module.build_id.empty() ? std::string() : "; build id " + module.build_id;
}

// "addresses have" / "address has", for `some` of `all` addresses.
std::string_view counted(size_t all, size_t some) {
    if (all == 1) {
        return "address has";
    }
    return some == 1 ? "addresses has" : "addresses have";
}

// Where a debug file for `module` can be had.
std::string next_step(const ModuleReport& module, const UnnamedHints& hints) {
    std::string debuginfod = hints.debuginfod_urls
                                 ? "the debuginfod servers of DEBUGINFOD_URLS had none"
                                 : "or set DEBUGINFOD_URLS=https://debuginfod.debian.net "
                                   "(Debian's server)";
    if (!module.package.empty()) {
        return fmt::format("its debug file is in Debian's {}-dbgsym package (the debian-debug "
                           "archive), {}",
                           module.package, debuginfod);
    }
    return fmt::format("install its debug package, or pass its debug directory (--debug-dir), "
                       "{}",
                       hints.debuginfod_urls ? "; " + debuginfod : debuginfod);
}

// How its unnamed addresses are shown, when call-frame information placed some.
std::string shown_as(const ModuleReport& module) {
    size_t functions = module.unnamed_functions.size();
    if (functions == 0) {
        return {};
    }
    return fmt::format("; they are shown as {}!0x<start of their function>, one frame per "
                       "function ({} {})",
                       base_name(module.path), functions,
                       functions == 1 ? "function" : "functions");
}

// Why `module`'s unnamed addresses have no name, and what would name them.
std::string reason(const ModuleReport& module, const UnnamedHints& hints) {
    switch (module.problem) {
    case FileProblem::missing:
        return module.problem_text + "; point to a copy of the file (--binary for the " +
               "program, --path-map OLD=NEW for a directory)";
    case FileProblem::other_build:
        return module.problem_text + "; point to the build that ran (--binary, --path-map)";
    case FileProblem::not_a_file:
        return "the kernel's code, not a file's";
    case FileProblem::other_architecture:
        return module.problem_text;
    case FileProblem::none:
        break;
    }
    if (module.has_debug_info) {
        return (module.has_symtab
                    ? "they lie outside every function its .symtab and .debug_info know"
                    : "they lie outside every function its .debug_info knows") +
               shown_as(module);
    }
    std::string lacks;
    if (module.has_symtab) {
        lacks = "they lie outside every symbol of its .symtab, and it has no .debug_info";
    } else if (module.has_dynsym) {
        lacks = "stripped: only its exported symbols (.dynsym) name code, and these lie in "
                "functions it does not export";
    } else {
        lacks = "no symbol table";
    }
    return lacks + shown_as(module) + "; " + next_step(module, hints) + build_id_suffix(module);
}

// `into` and `more` as one ascending list without repeats.
void unite(std::vector<uint64_t>& into, const std::vector<uint64_t>& more) {
    std::vector<uint64_t> both;
    both.reserve(into.size() + more.size());
    std::set_union(into.begin(), into.end(), more.begin(), more.end(), std::back_inserter(both));
    into = std::move(both);
}

// ", under 12.5% of the bytes in use", or nothing when the profile holds nothing.
std::string under(int64_t value, const UnnamedShare& share) {
    if (share.total <= 0) {
        return {};
    }
    double percent =
        100.0 * static_cast<double>(std::max<int64_t>(value, 0)) / static_cast<double>(share.total);
    return fmt::format(", under {:.1f}% of the {}", percent, share.what);
}

// How to get the -dbgsym packages of `packages` (most of the share first): Debian keeps
// them in an archive of their own, which apt knows only once a source line names it.
std::string apt_advice(const std::vector<std::string>& packages, const UnnamedHints& hints) {
    constexpr size_t most_named = 6;
    std::string install = "apt install";
    for (size_t i = 0; i < packages.size() && i < most_named; ++i) {
        install += fmt::format(" {}-dbgsym", packages[i]);
    }
    if (packages.size() > most_named) {
        install +=
            fmt::format(" (and {} more, --verbose names them)", packages.size() - most_named);
    }
    if (hints.debug_archive_listed) {
        return install;
    }
    std::string release = hints.debian_codename.empty() ? "<release>" : hints.debian_codename;
    return fmt::format("add Debian's debug archive (the line 'deb http://deb.debian.org/"
                       "debian-debug/ {}-debug main' in /etc/apt/sources.list.d/debug.list, "
                       "then apt update) and {}",
                       release, install);
}

// The one thing to do for `files` (most of the share first): their -dbgsym packages
// where dpkg knows them, their debug files' directory otherwise, or debuginfod.
std::string what_to_do(const std::vector<const ModuleReport*>& files, const UnnamedHints& hints) {
    std::vector<std::string> packages;
    bool unpackaged = false;
    for (const ModuleReport* file : files) {
        if (file->package.empty()) {
            unpackaged = true;
        } else if (std::find(packages.begin(), packages.end(), file->package) == packages.end()) {
            packages.push_back(file->package);
        }
    }
    std::string todo = packages.empty() ? std::string() : apt_advice(packages, hints);
    if (unpackaged) {
        todo += fmt::format("{}pass {} directory (--debug-dir)",
                            todo.empty() ? "" : "; for the others, ",
                            files.size() == 1 ? "its debug file's" : "their debug files'");
    }
    todo += hints.debuginfod_urls ? " (the servers of DEBUGINFOD_URLS had none)"
                                  : ", or set DEBUGINFOD_URLS=https://debuginfod.debian.net";
    return todo;
}

// The first few of `files` by their file names: "a.so, b.so, c and 26 more".
std::string file_names(const std::vector<const ModuleReport*>& files) {
    constexpr size_t most_named = 3;
    std::string names;
    for (size_t i = 0; i < files.size() && i < most_named; ++i) {
        names += fmt::format("{}{}", i == 0 ? "" : ", ", base_name(files[i]->path));
    }
    if (files.size() > most_named) {
        names += fmt::format(" and {} more", files.size() - most_named);
    }
    return names;
}

// One line for all files without debug information: how many, what they leave unnamed,
// under how much of the profile, and the one thing to do. Empty when there are none.
std::string summary_line(std::span<const ModuleReport> modules, const UnnamedHints& hints,
                         const UnnamedShare& share, bool verbose) {
    std::vector<const ModuleReport*> files;
    size_t unnamed = 0;
    for (const ModuleReport& module : modules) {
        if (lacks_debug_info(module)) {
            files.push_back(&module);
            unnamed += module.unnamed.size();
        }
    }
    if (files.empty()) {
        return {};
    }
    std::stable_sort(files.begin(), files.end(), [](const ModuleReport* a, const ModuleReport* b) {
        return a->unnamed_value > b->unnamed_value;
    });
    std::string todo = what_to_do(files, hints);
    std::string which = fmt::format("{} {} without debug information ({})", files.size(),
                                    files.size() == 1 ? "file" : "files", file_names(files));
    return fmt::format("{} {} {} {} without a name{}: {}{}", which,
                       files.size() == 1 ? "leaves" : "leave", unnamed,
                       unnamed == 1 ? "address" : "addresses", under(share.without_debug, share),
                       todo, verbose ? "" : " (--verbose says which file holds what)");
}

} // namespace

bool is_stripped(const ModuleReport& module) {
    return module.problem == FileProblem::none && !module.unnamed.empty() && module.has_dynsym &&
           !module.has_symtab && !module.has_debug_info;
}

std::string stripped_advice(const ModuleReport& module, const UnnamedHints& hints) {
    std::string get = module.package.empty() ? "install its debug file (--debug-dir)"
                                             : fmt::format("apt install {}-dbgsym", module.package);
    return fmt::format("no symbols beyond .dynsym (stripped); {}, {}", get,
                       hints.debuginfod_urls ? "DEBUGINFOD_URLS's servers had none"
                                             : "or set DEBUGINFOD_URLS");
}

std::vector<std::string> stripped_notes(std::span<const ModuleReport> modules,
                                        const UnnamedHints& hints) {
    std::vector<std::string> notes;
    for (const ModuleReport& module : modules) {
        if (is_stripped(module)) {
            notes.push_back(
                fmt::format("{}: {}", base_name(module.path), stripped_advice(module, hints)));
        }
    }
    return notes;
}

void merge_module_reports(std::vector<ModuleReport>& modules, std::vector<ModuleReport> more) {
    for (ModuleReport& entry : more) {
        auto same = std::find_if(modules.begin(), modules.end(), [&](const ModuleReport& m) {
            return m.path == entry.path && m.problem == entry.problem;
        });
        if (same == modules.end()) {
            modules.push_back(std::move(entry));
            continue;
        }
        unite(same->offsets, entry.offsets);
        unite(same->unnamed, entry.unnamed);
        unite(same->unnamed_functions, entry.unnamed_functions);
        same->addresses =
            std::max(same->offsets.size(), std::max(same->addresses, entry.addresses));
        same->unnamed_value += entry.unnamed_value;
        same->has_symtab = same->has_symtab || entry.has_symtab;
        same->has_dynsym = same->has_dynsym || entry.has_dynsym;
        same->has_debug_info = same->has_debug_info || entry.has_debug_info;
        if (same->build_id.empty()) {
            same->build_id = entry.build_id;
        }
        if (same->package.empty()) {
            same->package = entry.package;
        }
    }
}

bool lacks_debug_info(const ModuleReport& module) {
    return module.problem == FileProblem::none && !module.unnamed.empty() && !module.has_debug_info;
}

std::vector<std::string> describe_unnamed(std::span<const ModuleReport> modules,
                                          std::span<const uint64_t> unmapped, bool verbose,
                                          const UnnamedHints& hints, const UnnamedShare& share) {
    std::vector<std::string> lines;
    if (std::string summary = summary_line(modules, hints, share, verbose); !summary.empty()) {
        lines.push_back(std::move(summary));
    }
    for (const ModuleReport& module : modules) {
        if (module.unnamed.empty() || (!verbose && lacks_debug_info(module))) {
            continue;
        }
        lines.push_back(fmt::format("{}: {} of {} {} no name{}: {}", module.path,
                                    module.unnamed.size(), module.addresses,
                                    counted(module.addresses, module.unnamed.size()),
                                    under(module.unnamed_value, share), reason(module, hints)));
        for (size_t i = 0; verbose && i < module.unnamed.size(); ++i) {
            lines.push_back(fmt::format("{}: no name at {}+0x{:x}", module.path,
                                        base_name(module.path), module.unnamed[i]));
        }
    }
    if (!unmapped.empty()) {
        lines.push_back(fmt::format("{} {} in no executable mapping of the dump, without a name",
                                    unmapped.size(),
                                    unmapped.size() == 1 ? "address lies" : "addresses lie"));
    }
    for (size_t i = 0; verbose && i < unmapped.size(); ++i) {
        lines.push_back(fmt::format("no mapping, no name at 0x{:x}", unmapped[i]));
    }
    return lines;
}

} // namespace heapkit
