// SPDX-License-Identifier: MIT
// Stripped modules (no symbols beyond .dynsym) show their code as addresses: every output
// of the runtime says which ones and how to get their names (the Debian -dbgsym package,
// DEBUGINFOD_URLS), briefly, so that an operator reading "varnishd!0x54560" knows why.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/symbolize/options.hpp"

#include <string>
#include <vector>

namespace heapkit::runtime {

// Puts the notes for `modules` (what symbolizing `profile` said of its files) into
// profile.notes (its pprof comments and flame graph subtitle), says each once per process
// on stderr (notices.hpp), and keeps it for the index page. Each file's package is asked
// of dpkg's file lists once per process. Thread-safe.
void note_stripped_modules(Profile& profile, std::vector<ModuleReport>& modules);

// Every such note this process has made so far, in the order first made.
std::vector<std::string> stripped_module_notes_so_far();

} // namespace heapkit::runtime
