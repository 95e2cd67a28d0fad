// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"

#include <string>

namespace heapkit {

// How an unnamed location prints: "module+0xOFFSET" (file offset inside the module's
// file, module by base name) when its module is known, else the runtime address "0x...".
std::string unnamed_location_text(const Profile& profile, const Location& location);

} // namespace heapkit
