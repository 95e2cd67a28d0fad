// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/symbolize/elf/elf_module.hpp"

#include <string>

namespace heapkit {

// The address index file (address_index.hpp) of `file`, whose build id is `build_id`:
// ElfModule::frames_at's answer for every stretch of its executable code between two
// answer bounds, neighbours with equal answers joined. Reads the whole DWARF (when
// `file` has some) once; afterwards `file` keeps none of the answers (their texts lived
// here). Not for two threads on one `file`; distinct files may be indexed side by side.
// With FileAfter::closed, `file` is closed (ElfModule::close_file) before the index file
// is put together, by a caller that needs it no more: the DWARF's memory and mapped pages
// are let go of before the file's bytes are held.
enum class FileAfter { kept, closed };
std::string build_address_index(const ElfModule& file, const std::string& build_id,
                                FileAfter after = FileAfter::kept);

} // namespace heapkit
