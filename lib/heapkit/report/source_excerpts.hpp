// SPDX-License-Identifier: MIT
// The HTML report's source view: bounded excerpts of the source files its frames name,
// read on the machine that writes the report, around the lines the frames point to.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace heapkit {

// What the frames say of one source file: its name as the debug information spells it
// (often relative to the compilation directory, which the frames do not keep), the lines
// they point to, and the directories of the modules they are in (where such a relative
// name is looked for, and in their parents).
struct SourceFile {
    std::string name;
    std::set<uint32_t> lines;
    std::set<std::string> module_dirs;
};

// Bounds: a report must stay small, and a file must not be read whole if it is huge.
struct ExcerptLimits {
    uint32_t context = 3;             // lines shown each side of a line a frame names
    size_t max_file_bytes = 8 << 20;  // larger files are not read
    size_t max_total_bytes = 1 << 20; // of excerpt text in one report
    size_t max_line_bytes = 240;      // a longer line is cut
};

// JSON members "sourceFiles" (per file found: its string id, the path read, and its
// excerpts as [first line, [texts]]) and "sourceMissing" (per file not found: its
// string id and where it was looked for), each followed by ",\n". `files` is keyed by
// the report's string id of the file name.
void append_source_excerpts(std::string& out, const std::map<uint32_t, SourceFile>& files,
                            const ExcerptLimits& limits = {});

} // namespace heapkit
