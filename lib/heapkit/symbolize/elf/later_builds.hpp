// SPDX-License-Identifier: MIT
// Whether the file found for a mapping is the build the process ran. A heap dump names
// files by path and carries no build id, so a program rebuilt in place after the dump
// (or another build given with --binary) is read for names as if it had run; when its
// code maps as the old one did (same segment offsets and page counts, as an -O1 and an
// -O2 build of one source often do), every name is wrong and nothing else tells. What
// does tell: a file modified after the dump was written, or one shorter than the pages
// the dump maps of it.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/symbolize/elf/elf_module.hpp"

#include <functional>
#include <optional>
#include <string>

namespace heapkit {

struct BuildDoubt {
    // True: the file cannot be what the process mapped (it is shorter than its pages),
    // and is not used. False: it may be a later build; the caller warns, or, under
    // --strict, does not use it.
    bool certain = false;
    std::string text; // names the file, says why, and what to give instead
};

// Doubt about `file`, found at `path` for `module` (module.path, --binary's, a path map's
// or a sysroot's). `at_dump_path` gives the file at module.path when `path` is elsewhere
// (null when it is not, or cannot be opened), asked only for a file newer than the dump:
// when that one is no newer than the dump, `file` is a copy made later, and is checked
// against it by build id instead (warn_other_builds, symbolize.cpp).
std::optional<BuildDoubt> doubt_build(const Module& module, const std::string& path,
                                      const ElfModule& file,
                                      const std::function<const ElfModule*()>& at_dump_path);

// The short form of a doubt that is not certain, for a file not used under --strict: the
// summary of what stayed unnamed says what to give instead.
std::string later_build_problem(const std::string& path, const ElfModule& file);

} // namespace heapkit
