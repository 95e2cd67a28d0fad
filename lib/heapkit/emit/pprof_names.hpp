// SPDX-License-Identifier: MIT
// A pprof profile named in place: the frames the symbolizer found are added to the
// locations its producer left without lines, and every other field keeps its bytes.
#pragma once

#include "heapkit/model/profile.hpp"
#include "heapkit/read/pprof_reader.hpp"
#include "heapkit/util/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace heapkit {

// What naming added, for the user.
struct PprofNamesAdded {
    size_t locations = 0; // locations that had no lines and have them now
    size_t functions = 0; // functions appended
};

// `encoded` (the inflated profile that read_pprof made `file` of) with the lines of each
// location of `named` (profile_of_pprof of `file`, then symbolized: its locations at the
// positions of the file's) added where the file's location had none and has a mapping;
// their functions and strings appended after the producer's, so that no index changes;
// those mappings marked as having functions (and files, lines, inline frames where they
// do), so that pprof does not name them again. Samples, labels, comments, sample types,
// periods and times stay byte for byte. Addresses are taken as the producer wrote them:
// pprof's are already those of the call (Go, rust-jemalloc-pprof and heapkit subtract one
// from return addresses). A frame named only by where its function starts (no symbol,
// Location::anonymous) is not added: no name is better than one that is not a symbol.
Result<std::string> add_pprof_names(std::string_view encoded, const PprofFile& file,
                                    const Profile& named, PprofNamesAdded* added = nullptr);

} // namespace heapkit
