// SPDX-License-Identifier: MIT
#include "heapkit/emit/stacks/frame_text.hpp"

#include <fmt/format.h>

namespace heapkit {

std::string location_address_text(const Profile& profile, const Location& location) {
    if (location.module == no_module) {
        return fmt::format("0x{:x}", location.address);
    }
    const Module& module = profile.modules[location.module];
    std::string_view base = module.path;
    if (size_t slash = base.rfind('/'); slash != std::string_view::npos) {
        base.remove_prefix(slash + 1);
    }
    return fmt::format("{}+0x{:x}", base, module.file_offset_of(location.address));
}

} // namespace heapkit
