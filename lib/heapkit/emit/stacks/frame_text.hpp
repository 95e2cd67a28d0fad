// SPDX-License-Identifier: MIT
#pragma once

#include "heapkit/model/profile.hpp"

#include <string>

namespace heapkit {

// How a location prints by address (and every unnamed one): "module+0xOFFSET" (file offset inside
// the module's file, module by base name) when its module is known, else the runtime address
// "0x...".
std::string location_address_text(const Profile& profile, const Location& location);

} // namespace heapkit
