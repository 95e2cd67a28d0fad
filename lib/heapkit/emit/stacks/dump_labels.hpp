// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

namespace heapkit {

// What each merged dump is called in labelled output, from Profile::sources (one per
// dump, in order): the file's base name, or the name as given where two dumps share a
// base name (the same file name from two hosts' directories stays two labels).
std::vector<std::string> dump_labels(const std::vector<std::string>& sources);

} // namespace heapkit
