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

// A summary of what stayed unnamed, one line per module that has unnamed addresses:
// how many, what the file lacks (or why no file was used) and the next step, e.g.
// "/usr/lib/libfoo.so.1: 12 of 40 addresses have no name: only its exported symbols
// (.dynsym) name code, and these lie in functions it does not export; they are shown as
// libfoo.so.1!0x<start>, one frame per function (3 functions); its debug file: Debian's
// libfoo1-dbgsym, or set DEBUGINFOD_URLS=https://debuginfod.debian.net; build id a50d…".
// A stripped module's line says only its stripped_advice() unless `verbose`: the tools
// print it for every command, and libstdc++ is stripped in every C++ program.
// `unmapped`: runtime addresses in no mapping of any dump, left unnamed.
// `verbose`: every unnamed address follows on a line of its own, as heapfold's
// address frames print it ("libfoo.so.1+0x1a2b"). Lines carry no "warning:" prefix.
std::vector<std::string> describe_unnamed(std::span<const ModuleReport> modules,
                                          std::span<const uint64_t> unmapped, bool verbose,
                                          const UnnamedHints& hints = {});

} // namespace heapkit
