// SPDX-License-Identifier: MIT
// A pprof profile (read/pprof_reader.hpp) as the model's Profile: every view opens it.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/read/pprof_reader.hpp"
#include "heapkit/util/error.hpp"

#include <string>

namespace heapkit {

// `file` as a Profile: its sample types (up to four; a heap profile's in their own slots)
// kept with their names and units in Profile::named_types, its default type, mappings
// as modules (the first the main executable), locations with lines as named frames,
// those without as addresses in their module for the symbolizer, samples as they are
// (pprof's values are already unsampled). `source` names the file.
Result<Profile> profile_of_pprof(const PprofFile& file, const std::string& source);

} // namespace heapkit
