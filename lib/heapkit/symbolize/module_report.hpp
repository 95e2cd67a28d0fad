// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/symbolize/options.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace heapkit {

// Adds `more` (reports of other dumps, or the --base dumps) to `modules`: one entry per
// file and problem, their addresses together, so that a command tells each file once.
void merge_module_reports(std::vector<ModuleReport>& modules, std::vector<ModuleReport> more);

// What the summary may suggest besides the files' own facts.
struct UnnamedHints {
    bool debuginfod_urls = false; // DEBUGINFOD_URLS was set: its servers were asked already
    // Debian's release ("bookworm"), when this is Debian: its -dbgsym packages are in a
    // separate archive, which apt does not know until a source line names it.
    std::string debian_codename;
    bool debug_archive_listed = false; // apt's sources name it already
};

// True for a file with no symbols beyond .dynsym and no DWARF (a stripped program or
// library as distributions ship it), some of whose addresses stayed unnamed.
bool is_stripped(const ModuleReport& module);

// What a stripped module (is_stripped) lacks and how to get its names, short:
// "no symbols beyond .dynsym (stripped); apt install varnish-dbgsym, or set DEBUGINFOD_URLS".
std::string stripped_advice(const ModuleReport& module, const UnnamedHints& hints = {});

// One line per stripped module, "<file name>: <stripped_advice>", for the runtime's
// outputs (pprof comments, flame graph subtitle, index page, stderr).
std::vector<std::string> stripped_notes(std::span<const ModuleReport> modules,
                                        const UnnamedHints& hints = {});

// A summary of what stayed unnamed. Files without debug information (stripped, as
// distributions ship them) are summed up in one line: how many, how many of their
// addresses have no name, the share of `share.what` under them, and the one thing to do
// (Debian's debug archive and the -dbgsym packages to install, most of the share first;
// DEBUGINFOD_URLS): every command of a program with many libraries says it, and it must
// stay one line. Other files (missing, another build, addresses outside every function)
// get a line each, e.g. "/usr/lib/libfoo.so.1: 12 of 40 addresses have no name, under
// 3.1% of the bytes in use: <why and what to do>".
// `unmapped`: runtime addresses in no mapping of any dump, left unnamed.
// `verbose`: every file its own line, the files without debug information too (what
// they lack, how their frames are shown, their package, build id), and every unnamed
// address on a line of its own, as heapfold's address frames print it
// ("libfoo.so.1+0x1a2b"). Lines carry no "warning:" prefix.
std::vector<std::string> describe_unnamed(std::span<const ModuleReport> modules,
                                          std::span<const uint64_t> unmapped, bool verbose,
                                          const UnnamedHints& hints = {},
                                          const UnnamedShare& share = {});

// True for a file whose unnamed addresses a debug file would name: it was opened, and
// has no DWARF (describe_unnamed's summary line).
bool lacks_debug_info(const ModuleReport& module);

} // namespace heapkit
