// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace heapkit {

// Why no file names a module's frames.
enum class FileProblem {
    none,               // a file was used
    not_a_file,         // a pseudo mapping such as [vdso]
    missing,            // none could be opened where it was looked for
    other_build,        // its code does not map as the dump's mapping
    other_architecture, // built for another machine than the program
};

// What symbolization made of one file the dump maps (its mappings in every dump
// together), for a summary of what stayed unnamed and what would name it.
struct ModuleReport {
    std::string path;     // as the dump names it
    std::string build_id; // of the file used, when one was and has one
    FileProblem problem = FileProblem::none;
    std::string problem_text;    // the problem as a sentence naming the file looked at
    bool has_symtab = false;     // .symtab (or .gnu_debugdata) in the file or its debug file
    bool has_debug_info = false; // DWARF, in the file or a separate debug file
    size_t addresses = 0;        // its distinct addresses that stacks run through
    // File offsets of those left without a name, ascending (jemalloc's own stripped
    // internals aside: they are cut from stacks anyway).
    std::vector<uint64_t> unnamed;
};

// A summary of what stayed unnamed, one line per module that has unnamed addresses:
// how many, what the file lacks (or why no file was used) and the next step, e.g.
// "/usr/lib/libfoo.so.1: 12 of 40 addresses have no name: no symbol table: install its
// debug package, or pass its debug directory; build id a50d…". `unmapped`: runtime
// addresses in no mapping of any dump, left unnamed. `list_addresses`: every unnamed
// address follows on a line of its own, as heapfold's address frames print it
// ("libfoo.so.1+0x1a2b"). Lines carry no "warning:" prefix.
std::vector<std::string> describe_unnamed(std::span<const ModuleReport> modules,
                                          std::span<const uint64_t> unmapped, bool list_addresses);

} // namespace heapkit
