// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/heapkit.hpp"
#include "heapkit/model/profile.hpp"

#include <string>

namespace heapkit {

// The profile as an uncompressed (write_pprof gzips it) perftools.profiles.Profile message.
std::string encode_pprof(const Profile& profile, const PprofOptions& options);

} // namespace heapkit
