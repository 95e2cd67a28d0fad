// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/emit/sample_type.hpp"
#include "heapkit/model/profile.hpp"

#include <string>
#include <vector>

namespace heapkit {

struct PprofOptions {
    SampleType default_type = SampleType::inuse_space;
    bool keep_allocator_frames = false; // leave drop_frames empty
    int compress_level = 6;             // zlib level for the gzip wrapper
    std::vector<std::string> comments;  // added after the "source: ..." comments
};

// The profile as an uncompressed perftools.profiles.Profile message.
std::string encode_pprof(const Profile& profile, const PprofOptions& options);

// The same, gzip-compressed: what `go tool pprof` reads (.pb.gz).
std::string write_pprof(const Profile& profile, const PprofOptions& options);

} // namespace heapkit
