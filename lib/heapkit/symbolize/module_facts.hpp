// SPDX-License-Identifier: MIT
// What symbolize() learns about each module's file besides names: the extent of its
// mapping, why no file could be used, and the per-file report of what stayed unnamed.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/symbolize/elf/elf_module.hpp"
#include "heapkit/symbolize/module_report.hpp"
#include "heapkit/symbolize/symbolize.hpp"

#include <string>
#include <vector>

namespace heapkit {

// What to tell about a module's file, told only when it matters: a module no stack runs
// through needs no file, nor one whose frames a jeprof symbolized file already named.
struct ModuleNotes {
    FileProblem problem = FileProblem::none; // why no file names its frames
    std::string problem_text;                // the same in a sentence, for the summary
    std::string remark; // about the file that names them; told when a stack runs through
};

// Each module's mapping (runtime addresses), joined with the mappings of the same file
// that continue it: a segment's mapping split in two (mprotect, madvise or mlock on part
// of it) is checked against the file as one.
std::vector<Module> mapped_extents(const std::vector<Module>& modules);

// Fills report.modules and report.unmapped from the named profile. `files[i]`: the file
// that named module i (borrowed; null when none did, for the reason in `notes[i]`).
void report_modules(const Profile& profile, const std::vector<const ElfModule*>& files,
                    const std::vector<ModuleNotes>& notes, SymbolizeReport& report);

} // namespace heapkit
