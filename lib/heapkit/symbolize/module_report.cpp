// SPDX-License-Identifier: MIT
#include "heapkit/symbolize/module_report.hpp"

#include <fmt/format.h>
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

// Why `module`'s unnamed addresses have no name, and what would name them.
std::string reason(const ModuleReport& module) {
    switch (module.problem) {
    case FileProblem::missing:
        return module.problem_text + "; point to a copy of the file";
    case FileProblem::other_build:
        return module.problem_text + "; point to the build that ran";
    case FileProblem::not_a_file:
        return "the kernel's code, not a file's";
    case FileProblem::other_architecture:
        return module.problem_text;
    case FileProblem::none:
        break;
    }
    if (!module.has_symtab && !module.has_debug_info) {
        return "no symbol table: install its debug package, or pass its debug directory" +
               build_id_suffix(module);
    }
    if (!module.has_debug_info) {
        return "they lie outside every symbol of its .symtab, and it has no .debug_info: its "
               "debug package may name them" +
               build_id_suffix(module);
    }
    return module.has_symtab ? "they lie outside every function its .symtab and .debug_info know"
                             : "they lie outside every function its .debug_info knows";
}

} // namespace

std::vector<std::string> describe_unnamed(std::span<const ModuleReport> modules,
                                          std::span<const uint64_t> unmapped, bool list_addresses) {
    std::vector<std::string> lines;
    for (const ModuleReport& module : modules) {
        if (module.unnamed.empty()) {
            continue;
        }
        lines.push_back(fmt::format(
            "{}: {} of {} {} no name: {}", module.path, module.unnamed.size(), module.addresses,
            counted(module.addresses, module.unnamed.size()), reason(module)));
        for (size_t i = 0; list_addresses && i < module.unnamed.size(); ++i) {
            lines.push_back(fmt::format("{}: no name at {}+0x{:x}", module.path,
                                        base_name(module.path), module.unnamed[i]));
        }
    }
    if (!unmapped.empty()) {
        lines.push_back(fmt::format("{} {} in no executable mapping of the dump, without a name",
                                    unmapped.size(),
                                    unmapped.size() == 1 ? "address lies" : "addresses lie"));
    }
    for (size_t i = 0; list_addresses && i < unmapped.size(); ++i) {
        lines.push_back(fmt::format("no mapping, no name at 0x{:x}", unmapped[i]));
    }
    return lines;
}

} // namespace heapkit
