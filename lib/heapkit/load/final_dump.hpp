// SPDX-License-Identifier: MIT
// A final dump (jemalloc's prof_final: PREFIX.PID.SEQ.f.heap, written at exit) holds what
// the program had not freed when it ended, often a small part of what it held while it
// ran: a view of it says so, and names the dumps taken while the process ran.
#pragma once

#include <string>

namespace heapkit {

// For a dump file named as prof_final names it: one sentence saying it was written at
// exit, and, when dumps of the same prefix and process taken while it ran (prof_interval's
// .iN, prof.dump's .mN, prof_gdump's .uN) are in its directory, how many and the largest
// (by the bytes in use its header line counts). Empty for any other name.
std::string final_dump_note(const std::string& path);

} // namespace heapkit
