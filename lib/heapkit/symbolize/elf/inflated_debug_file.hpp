// SPDX-License-Identifier: MIT
// Debug files compress their DWARF (SHF_COMPRESSED, zlib), and libdw 0.188 inflates every
// .debug_* section with zlib when it opens one, those it never reads for names
// (locations, macros) included: most of a first run's CPU went there. A copy of the file
// with the sections names need inflated by libdeflate (faster than zlib) and the others
// left empty is what libdw opens instead.
#pragma once

#include "heapkit/util/unique_fd.hpp"

#include <span>
#include <string>

namespace heapkit {

// A memory file (memfd) holding the ELF file open at `fd` with its compressed .debug_*
// sections that names come from (info, abbrev, line, str, line_str, str_offsets, addr,
// ranges, rnglists, aranges) inflated, and its other compressed .debug_* sections
// emptied; every other section as it is. An empty UniqueFd when the file has no
// compressed .debug_* section, when its NT_GNU_BUILD_ID is not `build_id` (raw bytes), or
// when anything fails: then `fd` is to be used as it is. `fd` is only read.
// A section whose header claims more than deflate can inflate its bytes to (1032:1), or
// more than 4 GiB, is not believed: nothing is allocated for it, and `*refused` (when
// given) says so, for a warning; likewise when the sections do not fit in memory.
UniqueFd inflated_debug_file(int fd, std::span<const unsigned char> build_id,
                             std::string* refused = nullptr);

} // namespace heapkit
